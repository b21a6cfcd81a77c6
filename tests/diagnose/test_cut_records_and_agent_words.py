"""Records that reach a paste without their head, and the same facts in other tools' words.

- the watchdog's WorkNCCL / WorkHCCL record cut before "Watchdog caught collective operation timeout:"
  (a paste that starts mid-line, two ranks' lines interleaved over the head): "ran for N milliseconds"
  after a work record is only ever the watchdog's timeout (ProcessGroupNCCL.cpp's format, torch 1.10+);
- an Xid written upper case by monitoring agents (gpud: "XID 79(GPU has fallen off the bus) detected on
  PCI:0000:ae:00"; exporters: "XID 48 ... ECC"), read like a person's summary of dmesg;
- DeepSpeed's assert_ints_same_as_other_ranks (runtime/utils.py): "disagreement between rank0 and rankN"
  is two ranks fetching different parameters, a desync with the other rank as the suspect;
- a bus error among NCCL's frames or lines: a crash whose likely cause is NCCL's shared-memory segments
  running past /dev/shm (SIGBUS on the first touch past the mount's end); the fix is the mount.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding

PREFIXES = ["", "[rank1]:", "[default1]:", "node3: ", "2025-01-02 03:04:05,678 - ERROR - "]

CUT_RECORDS = [
    (
        "WorkNCCL(SeqNum=5125, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1807734 millisecond",
        {"seq": 5125, "op": "ALLREDUCE", "ran_for_ms": 1807734},
    ),
    (
        "ion timeout: WorkNCCL(SeqNum=12, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600113 milliseconds before timing out.",
        {"seq": 12, "op": "BROADCAST"},
    ),
    (
        "WorkHCCL(SeqNum=88, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1800516 milliseconds before timing out.",
        {"seq": 88, "backend": "hccl"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "facts"), CUT_RECORDS)
def test_a_watchdog_record_without_its_head_is_a_collective_timeout(
    prefix: str, line: str, facts: dict
) -> None:
    check_root(prefix + line + "\n", "RUN151", facts)


def test_a_work_record_that_did_not_time_out_is_no_timeout() -> None:
    assert root_finding("[I] WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=1800000) completed\n") is None


AGENT_XIDS = [
    ("XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00", "RUN243", {"xid": 79}),
    ("gpud: XID 48 (DBE uncorrectable ECC error) on GPU 3", "RUN242", {"xid": 48}),
    ("Xid 79 (GPU has fallen off the bus) detected on GPU 0", "RUN243", {"xid": 79}),
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize(("line", "code", "facts"), AGENT_XIDS)
def test_an_xid_in_an_agents_words_names_its_fault(prefix: str, line: str, code: str, facts: dict) -> None:
    check_root(prefix + line + "\n", code, facts)


def test_a_question_about_an_xid_is_no_report() -> None:
    assert root_finding("What does XID 79 (fallen off the bus) mean for my training job?\n") is None


DISAGREEMENTS = [
    (
        "RuntimeError: disagreement between rank0 and rank2: rank0: [-4866073977605047075, -4957833660337767236], \n"
        "rank2: [2, 3, 4, 6, 34, 7]\n",
        2,
    ),
    (
        "[rank6]: RuntimeError: disagreement between rank0 and rank6: rank0: [-48290582786672], rank6: [1, 2]\n",
        6,
    ),
]


@pytest.mark.parametrize(("log", "suspect"), DISAGREEMENTS)
def test_deepspeeds_rank_disagreement_is_a_desync_naming_the_other_rank(log: str, suspect: int) -> None:
    check_root(log, "RUN201", {"suspect_rank": suspect, "ranks_compared": [0, suspect]})


BUS_ERRORS = [
    "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
    "==== backtrace (tid:   3095) ====\n 0 0x0000000000043090 killpg()  ???:0\n"
    " 1 0x000000000018bb41 __nss_database_lookup()  ???:0\n 2 0x000000000007587d ncclGroupEnd()  ???:0\n",
    "node1:2231:2290 [0] NCCL INFO Channel 00/02 :    0   1\nnode1:2231:2290 [0] NCCL INFO Connected all rings\n"
    "Bus error (core dumped)\n",
    "Fatal Python error: Bus error\n\nThread 0x00007f (most recent call first):\n"
    '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 2050 in all_reduce\n'
    "NCCL WARN Error while creating shared memory segment\n",
]


@pytest.mark.parametrize("log", BUS_ERRORS)
def test_a_bus_error_inside_nccl_names_dev_shm(log: str) -> None:
    check_root(log, "RUN131", {"likely_cause": "shared_memory", "signal": "SIGBUS"})


def test_a_bus_error_without_nccl_names_no_cause() -> None:
    check_root("python train.py\nBus error (core dumped)\n", "RUN131", {"signal": "SIGBUS"})
    root = root_finding("python train.py\nBus error (core dumped)\n")
    assert root is not None and "likely_cause" not in root.facts
