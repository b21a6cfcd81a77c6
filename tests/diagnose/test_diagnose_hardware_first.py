"""A GPU's hardware fault (fallen off the bus, uncorrectable ECC, an Xid that needs a reset) is the
root cause of the software errors of the job beside it (CUDA illegal memory access, NCCL errors,
crashes), in whichever file and order they come and whether or not the files share a clock. A
software fault the driver merely reports (Xid 31, a page fault) does not outrank the CUDA error."""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_sources

ILLEGAL = (
    "[rank1]:[E1204 10:00:01.123456 1234 ProcessGroupNCCL.cpp:1595] [PG 0 Rank 1] Process group watchdog "
    "thread terminated with exception: CUDA error: an illegal memory access was encountered\n"
    "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
)
# In a job (its rank prefix): a single process's own kernel fault is no failure (test_false_alarms.py).
BARE_ILLEGAL = "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
NCCL_ERR = (
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled "
    "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
)
XID = {
    "off the bus": (
        "[Thu Dec  4 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1235, name=python, "
        "GPU has fallen off the bus.\n",
        "RUN243",
    ),
    "ecc": (
        "[Thu Dec  4 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 48, pid=1235, name=python, "
        "An uncorrectable double bit error (DBE) has been detected on GPU.\n",
        "RUN242",
    ),
    "nvlink": (
        "[Thu Dec  4 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 74, pid=1235, name=python, "
        "NVLink: fatal error detected on link 3\n",
        "RUN241",
    ),
}


def _root(sources: list[tuple[str, str]]) -> str:
    findings = diagnose_sources(sources)
    assert findings[0].facts.get("root_cause") is True
    return findings[0].code


@pytest.mark.parametrize("kind", sorted(XID))
@pytest.mark.parametrize("software", [ILLEGAL, BARE_ILLEGAL, NCCL_ERR])
@pytest.mark.parametrize("job_first", [True, False])
def test_hardware_leads_the_software_error_it_causes_in_any_file_order(
    kind: str, software: str, job_first: bool
) -> None:
    line, code = XID[kind]
    files = [("a_job.log", software), ("dmesg.log", line)]
    if not job_first:
        files.reverse()
    findings = diagnose_sources(files)
    assert findings[0].code == code, [f.code for f in findings]
    assert all(f.facts.get("cascade_of") == code for f in findings[1:])


def test_an_application_xid_does_not_outrank_the_cuda_error() -> None:
    page_fault = (
        "[Thu Dec  4 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 31, pid=1235, name=python, "
        "Ch 00000010, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12345000\n"
    )
    assert _root([("a_job.log", BARE_ILLEGAL), ("dmesg.log", page_fault)]) == "RUN244"


def test_with_a_shared_clock_a_much_earlier_software_error_keeps_the_lead() -> None:
    # Both ISO-stamped: the CUDA error two hours before the Xid is not its consequence.
    early = "2026-12-04 08:00:01,000 " + BARE_ILLEGAL
    late = (
        "2026-12-04 10:00:00,000 NVRM: Xid (PCI:0000:3b:00): 79, pid=1235, name=python, "
        "GPU has fallen off the bus.\n"
    )
    assert _root([("a_job.log", early), ("z_dmesg.log", late)]) == "RUN244"
    soon = "2026-12-04 10:00:30,000 " + BARE_ILLEGAL
    assert _root([("a_job.log", soon), ("z_dmesg.log", late)]) == "RUN243"
    assert _root([("a_job.log", late.replace("10:00:00", "10:00:45")), ("z_dmesg.log", soon)]) == "RUN243"


def test_the_job_wide_groups_list_the_hardware_fault_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pgdoctor.diagnose.api import diagnose_paths

    (tmp_path / "rank_0.log").write_text(NCCL_ERR.replace("[rank0]: ", ""))
    (tmp_path / "rank_1.log").write_text(BARE_ILLEGAL + XID["off the bus"][0])
    report = diagnose_paths([str(tmp_path)])
    groups = report.meta["jobwide"]["groups"]
    assert groups[0]["signature"].startswith("RUN243"), groups
