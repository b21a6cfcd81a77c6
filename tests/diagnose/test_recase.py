"""A paste without one capital letter is read again in the casing the rows know and with every row matching
caselessly (doctor/diagnose/text/recase.py, model/lazy_re.caseless); any other source is read exactly as it
is."""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import _diagnose_once
from pgdoctor.diagnose.rules import MODULES
from pgdoctor.diagnose.text import recase
from pgdoctor.diagnose.text.reader import Source
from tests.helpers.diagnose_root import root_finding
from tests.helpers.shapes import dev_cases


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
        # real (lightning-sam #6): the type retyped as two words, and "Expected" that the rows' examples
        # write both ways; one casing per word read neither
        (
            "runtime error: expected to have finished reduction in the prior iteration before starting a new "
            "one",
            "RUN202",
        ),
        # knowledge/xid's parser reads "Xid" as the driver prints it: the word casing gives it that
        (
            "kernel: nvrm: xid (pci:0000:1a:00): 13, pid=25121, name=python3.10, graphics exception: esr "
            "0x57e7b0",
            "RUN241",
        ),
        # a table indexed by the captured word (the shell's "Segmentation fault") finds it lower-cased
        ("train.sh: line 12: 4567 segmentation fault      (core dumped) python train.py", "RUN131"),
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


def test_no_row_fails_on_any_dev_case_lower_cased() -> None:
    """Every dev case and every row's example lower-cased and read caselessly: a row that indexes a table
    with a captured word, or compares it with the program's casing, must not raise (the KeyErrors this
    found are lazy_re.ByText tables now)."""
    cases = [c["log"] for c in dev_cases()]
    cases += [ex for m in MODULES for row in getattr(m, "SIGNATURES", ()) for ex in row.examples]
    for log in cases:
        low = log.lower().encode("utf-8", "surrogatepass")
        src = Source("job.log", lambda low=low: iter([low]), caseless=True)
        _diagnose_once([src], [], False, None)


def test_a_source_with_a_capital_letter_is_never_read_caselessly() -> None:
    # "rank" in a healthy line; with one capital the second reading never happens
    assert (
        root_finding("Epoch 3: runtime error: expected to have finished reduction in the prior iteration\n")
        is None
    )
