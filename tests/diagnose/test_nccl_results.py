"""NCCL's result codes are one table (knowledge/nccl_results.py) that every reader of a result takes its
names and texts from: a result read by number, by enum or CuPy name, or by its text gets the same finding."""

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.diagnose.rules.nccl_detail import kind_of
from pgdoctor.knowledge.nccl_results import RESULTS


def _first_code(text: str) -> str:
    real = [f for f in diagnose_sources([("log", text)]) if f.severity.value in ("warn", "fail")]
    assert real, text
    return real[0].code


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r.name)
def test_every_result_text_has_a_kind(result) -> None:  # type: ignore[no-untyped-def]
    assert kind_of(result.text) is not None


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r.name)
def test_a_result_reads_alike_by_number_name_and_text(result) -> None:  # type: ignore[no-untyped-def]
    # glog's CHECK of an ncclResult_t (Caffe's NCCL_CHECK), a wrapper naming the enum, CuPy's NcclError.
    by_number = _first_code(
        "F1203 10:00:00.000 1 nccl.hpp:20] Check failed: result == ncclSuccess "
        f"({result.number} vs. 0)  {result.text}"
    )
    # the enum name inside a wrapper's message (nccl_errors' name-anywhere row, read from the table)
    by_name = _first_code(f"RuntimeError: ncclCommInitRank failed with {result.name}")
    by_cupy = _first_code(f"cupy_backends.cuda.libs.nccl.NcclError: {result.cupy_name}: {result.text}")
    assert by_number == by_name == by_cupy == kind_of(result.text).code  # type: ignore[union-attr]
