"""Families of the released v14 held-out half (group oom_net_misc), read at their sources:

- c10d reducer.cpp ensure_prior_reduction_finished's detail lines alone ("Parameters which did not receive
  grad for rank 1: ...", "Parameter indices which did not receive grad for rank 0: 3 4"), as an issue's
  title writes them (lower case, the list left off): RUN202;
- c10d TraceUtils.h retrieveDesyncReport (TORCH_NCCL_DESYNC_DEBUG, built only after a collective timed
  out): its report lines and its internal asserts, raised through the watchdog or caught by
  ProcessGroupNCCL ("Failed to retrieve TORCH_NCCL_DESYNC_DEBUG report"): RUN151.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

UNUSED = [
    ("Parameters which did not receive grad for rank 3: head.fc.weight, head.fc.bias", {"rank": 3}),
    ("Parameter indices which did not receive grad for rank 0: 12 13 14", {"rank": 0}),
    ("parameters which did not receive grad for rank 1", {"rank": 1}),
    ("Parameter indices which did not receive grad for rank 2", {"rank": 2}),
    ("RuntimeError: DDP fails: Parameters which did not receive grad for rank 5:", {"rank": 5}),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("line", "facts"), UNUSED)
def test_reducer_unused_parameter_lines_alone(prefix: str, line: str, facts: dict[str, object]) -> None:
    _check(prefixed(prefix, line), "RUN202", facts)


DESYNC = [
    (
        "[I ProcessGroupNCCL.cpp:854] [Rank 0] NCCL watchdog thread terminated with exception: "
        "traceMap[thisSeq][myRank].second == kEventStart INTERNAL ASSERT FAILED at "
        '"/opt/pytorch/torch/csrc/distributed/c10d/TraceUtils.h":237, please report a bug to PyTorch. '
        "Timeout rank [0] last trace item must be kEventStart. thisSeq = 57, col = ALLREDUCE",
        {"seq": 57, "op": "ALLREDUCE", "rank": 0},
    ),
    (
        "[E ProcessGroupNCCL.cpp:1300] [PG 0 Rank 2] Failed to retrieve TORCH_NCCL_DESYNC_DEBUG report.  "
        "Please file an issue. Error: Timeout rank [2] must have collective tracking iteam in c10::Store "
        "trace",
        {},
    ),
    (
        "[E ProcessGroupNCCL.cpp:470] [Rank 1] Failed to retrieve NCCL_DESYNC_DEBUG report.  Please file an "
        "issue. Error: Trace shouldn't be empty while enabled GLOO_ASYNC_TIMEOUT_DEBUG",
        {},
    ),
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 3] \n\t - [3] Timeout at collective: BROADCAST, #12\n\t - To our "
        "best knowledge, ranks [1, 2] are the lagging ranks that caused this timeout. They never joined "
        "any collectives",
        {"seq": 12, "op": "BROADCAST", "rank": 3},
    ),
    (
        "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
        "\t   - [2] joined but didn't finish collective #88 (count from 1)\n"
        "\t     [0, 1, 3] finished collective #88, but didn't join collective #89 (count from 1)",
        {},
    ),
    (
        "Exception raised from retrieveDesyncReport at /opt/pytorch/torch/csrc/distributed/c10d/TraceUtils.h:"
        "237 (most recent call first):",
        {},
    ),
]


@pytest.mark.parametrize("prefix", ["", "[rank0]:", "2024-03-01 10:00:00 "])
@pytest.mark.parametrize(("log", "facts"), DESYNC)
def test_desync_debug_report_is_a_timeout(prefix: str, log: str, facts: dict[str, object]) -> None:
    _check(prefixed(prefix, log), "RUN151", facts)


QUIET = [
    # healthy: the reducer's setting and DDP's docs words, not its error
    "find_unused_parameters=True: parameters which did not receive grad are skipped in the all-reduce",
    "[I ProcessGroupNCCL.cpp:700] [Rank 0] ProcessGroupNCCL initialized with following options: "
    "TORCH_NCCL_DESYNC_DEBUG: 1",
    "TORCH_NCCL_DESYNC_DEBUG=1 prints a desync report after a timeout",
]


@pytest.mark.parametrize("log", QUIET)
def test_look_alikes_stay_quiet(log: str) -> None:
    assert _root(log + "\n") is None
