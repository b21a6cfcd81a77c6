"""x4 of 2026-12-07 (late): real pasted lines of NCCL's transport failures and invalid usage that the rules
did not read, each read as its family. The variants below are not in any thread unless a URL says so.

- A thread's title that names NCCL's or gloo's failure by its kind, in a person's words
  (rules/nccl_titles.py): "NCCL failure caused by NET/IB completion error" (RUN173), "Test NCCL failure
  common with network error." (RUN172), "gloo连接失败" and "Connection closed by peer when using
  dist.isend in gloo backend" (RUN174),
  "[Bug] Invalid usage of NCCL library when starting ..." (RUN191); variants: NCCL's system error (RUN171),
  internal error (RUN192), two ranks on one GPU (RUN193), RCCL, Chinese words. A question, a fix, a setting,
  a time-out, a report that it works and NCCL's own INFO lines stay silent.
- aws-ofi-nccl's completion error without NCCL's logger prefix, as torch's "Last error:" keeps it ("NET/OFI
  Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0"):
  RUN173 (rules/ofi_plugin.py), across the plugin's formats (up to v1.5 without the pointer, the rdma
  protocol's "seq %d", "(nil)", "Unable to read from fi_cq_readerr"); a peer's queue pair that is gone stays
  RUN133, an INFO line stays silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# (log, code, category)
TITLES = [
    # https://github.com/NVIDIA/nccl/issues/1405
    ("NCCL failure caused by NET/IB completion error", "RUN173", "nccl_network"),
    ("NET/IB completion error during multi-node training", "RUN173", "nccl_network"),
    ("NCCL IB error on 2 nodes with RoCE", "RUN173", "nccl_network"),
    ("RCCL crashes with InfiniBand failure", "RUN173", "nccl_network"),
    # https://github.com/NVIDIA/nccl-tests/issues/252
    ("Test NCCL failure common with network error.", "RUN172", "nccl_network"),
    ("NCCL network error on multi-node training", "RUN172", "nccl_network"),
    ("RCCL network error between nodes", "RUN172", "nccl_network"),
    ("NCCL remote process exited during all_reduce", "RUN172", "nccl_network"),
    ("多机训练 NCCL 网络错误", "RUN172", "nccl_network"),
    ("NCCL system error on multi node", "RUN171", "nccl_network"),
    ("[BUG] ncclSystemError with 16 GPUs", "RUN171", "nccl_network"),
    # https://github.com/flagos-ai/FlagCX/issues/117
    ("gloo连接失败", "RUN174", "nccl_network"),
    # https://github.com/pytorch/pytorch/issues/75512
    ("Connection closed by peer when using dist.isend in gloo backend", "RUN174", "nccl_network"),
    ("gloo connection failed between two machines", "RUN174", "nccl_network"),
    ("Gloo backend: failed to connect to rank 1", "RUN174", "nccl_network"),
    # https://github.com/open-mmlab/mmselfsup/issues/731
    (
        "[Bug] Invalid usage of NCCL library when starting the downstream classification task",
        "RUN191",
        "nccl_usage",
    ),
    ("ncclInvalidUsage when running two processes", "RUN191", "nccl_usage"),
    ("Invalid usage of the NCCL library with torch 2.1", "RUN191", "nccl_usage"),
    ("NCCL internal error in FSDP training", "RUN192", "nccl_usage"),
    ("Two ranks on the same GPU", "RUN193", "nccl_usage"),
    ("Multiple processes use the same GPU with NCCL", "RUN193", "nccl_usage"),
]

LINES = [
    # https://github.com/NVIDIA/nccl/issues/1928 (torch's "Last error:" keeps the plugin's text alone)
    (
        "[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). "
        "Completed length: 0",
        "RUN173",
        "nccl_network",
    ),
    (
        "NET/OFI Request 0x7f14cc5b60c0 seq 12 completed with error. RC: 5. Error: 4124 (Receiver not "
        "ready). Completed length: 0, Request: {dev: 0, size: 0, state: CREATED, type: SEND}",
        "RUN173",
        "nccl_network",
    ),
    ("NET/OFI Request completed with error. RC: 21. Error: unknown error", "RUN173", "nccl_network"),
    (
        "NET/OFI Request (nil) completed with error. RC: 5. Error: 12 (Connection reset by peer). "
        "Completed length: 0",
        "RUN173",
        "nccl_network",
    ),
    (
        "NET/OFI Unable to read from fi_cq_readerr. RC: -11. Error: Resource temporarily unavailable",
        "RUN173",
        "nccl_network",
    ),
    (
        "Last error:\nNET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 "
        "(UNDELIVERABLE). Completed length: 0",
        "RUN173",
        "nccl_network",
    ),
    # the peer's queue pair is gone: the peer died, not the fabric
    (
        "NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 5. Error: 3 (Invalid receiver queue pair "
        "number (QPN)). Completed length: 0",
        "RUN133",
        "process_crash",
    ),
]

SILENT = [
    # questions, fixes, settings, a time-out, a report that it works
    "How to fix NCCL network error?",
    "NCCL network error may happen with NCCL_IB_DISABLE=1",
    "Is invalid usage of NCCL supported?",
    "Two processes on the same GPU works fine",
    "Set NCCL_IB_TIMEOUT to avoid IB errors",
    "NCCL system error handling in the watchdog",
    "Gloo: all ranks connected, connection established",
    "Fail or report when using the same device multiple times in a communicator",
    # NCCL's and the plugin's own healthy lines
    "node1:123:456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
    "node1:123:456 [0] NCCL INFO Using network IB",
    "node1:1:2 [0] NCCL INFO NET/OFI Request 0x55 completed",
    "node1:1:2 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
    # a title with no failure of these kinds
    "NCCL version 2.18.5 on 2 nodes",
    "Same GPU memory usage on every rank",
]


@pytest.mark.parametrize(("log", "code", "category"), TITLES)
def test_each_title_names_its_cause(log: str, code: str, category: str) -> None:
    root = root_finding(log)
    assert root is not None and (root.code, root.category) == (code, category), (log, root)


@pytest.mark.parametrize(("log", "code", "category"), LINES)
@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:3])
def test_each_line_names_its_cause(log: str, code: str, category: str, prefix: str) -> None:
    check_root(prefixed(prefix, log), code)
    root = root_finding(prefixed(prefix, log))
    assert root is not None and root.category == category


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line) is None, line
