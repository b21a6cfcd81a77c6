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


def test_words_programs_print_in_lower_case_keep_it() -> None:
    # torchrun's own line and spconv's message are lower case as printed; their rows read them so
    line = b"failed (exitcode: -9) local_rank: 0 (pid: 1760809) of binary: /usr/bin/python\n"
    assert recase.restored(line) == line
    assert recase.restored(b"cuda execution failed with error 2") == b"cuda execution failed with error 2"


def test_a_source_past_the_limit_streams_unchanged() -> None:
    chunks = [b"runtimeerror: cuda out of memory\n" * 1000] * 3  # 99 KB in three chunks
    assert list(recase.recased(lambda: iter(chunks))()) == chunks
    small = [b"runtimeerror: cuda out of memory\n"]
    assert list(recase.recased(lambda: iter(small))()) == [b"RuntimeError: cuda out of memory\n"]
