"""A paste without one capital letter is read in the casing the rows know (doctor/diagnose/text/recase.py);
any other source is read exactly as it is."""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.text import recase
from tests.helpers.diagnose_root import root_finding


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "runtimeerror: cuda out of memory. tried to allocate 2.00 gib (gpu 0; 79.15 gib total capacity)",
            "RUN101",
        ),
        (
            "[rank0]:[e processgroupnccl.cpp:563] [rank 0] watchdog caught collective operation timeout: "
            "worknccl(seqnum=5, optype=allreduce, numelin=1, numelout=1, timeout(ms)=600000) ran for 600003 "
            "milliseconds before timing out.",
            "RUN151",
        ),
        (
            "ncclsystemerror: system call (e.g. socket, malloc) or external library call failed or "
            "device error.",
            "RUN171",
        ),
    ],
)
def test_a_lower_cased_paste_reads_as_the_program_printed_it(line: str, code: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.code == code, (line, root)


def test_a_source_with_a_capital_letter_is_left_as_it_is() -> None:
    data = b"Epoch 3: runtimeerror in worknccl\n"
    assert recase.restored(data) is data
    assert recase.restored(data.lower()) == b"epoch 3: RuntimeError in WorkNCCL\n"


@pytest.mark.parametrize(
    ("log", "code"),
    [
        # torchrun's own line and spconv's message (real, v11g / v12m) are lower case as printed: the first
        # reading finds their failure, so no second reading in another casing replaces it
        ("failed (exitcode: -9) local_rank: 0 (pid: 1760809) of binary: /usr/bin/python\n", "RUN121"),
        ("`mmdet3d/ops/spconv/src/indice_cuda.cu 124`\n`cuda execution failed with error 2`\n", "RUN101"),
        ("aborting due to error in nvshmemi_init_thread\n", "RUN362"),  # NVSHMEM prints it so
    ],
)
def test_a_program_s_own_lower_case_message_keeps_its_own_reading(log: str, code: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == code


def test_only_a_small_source_without_a_capital_letter_is_read_again() -> None:
    small = [b"runtimeerror: cuda out of memory\n"]
    assert recase.lower_case_only(lambda: iter(small))
    assert list(recase.recased(lambda: iter(small))()) == [b"RuntimeError: CUDA out of memory\n"]
    assert not recase.lower_case_only(lambda: iter([b"runtimeerror: cuda out of memory\n" * 3000]))
    assert not recase.lower_case_only(lambda: iter([b"Runtimeerror: cuda out of memory\n"]))
