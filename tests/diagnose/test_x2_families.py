"""Line prefixes the text layer strips (text/normalize.py), measured over the released cases: a known
message or a traceback line that sat after a prefix no pattern knew.

- a logging platform's level and component on every line, behind one or two timestamps (one tab-separated):
  "2023-09-14 21:27:58\\t2023-09-14 21:27:58.000 [INFO] [Driver] File ...": a soft prefix, stripped only
  where the line before or after opens with the same one;
- a bare number tag on every line ("[5]:torch.distributed.DistBackendError: ..."): soft too;
- Go's and agents' slash dates ("2023/10/26 12:12:18 "), a stamp without its seconds ("2022-11-29 00:27 ");
- horovodrun's gloo launcher tag "[1]<stderr>:" (Open MPI's "[1,3]<stderr>:" without the job number);
- vLLM's worker tags with the rank ("(VllmWorker rank=1 pid=7226) "), indented, and its logger's file with
  its path ("ERROR 06-04 12:45:50 [v1/executor/multiproc_executor.py:932] ");
- torch_xla's xla_dist worker tag "10.164.0.33 [0] ".

Text that only looks like a prefix stays: a message opening with a bracketed tag, a level tag before a
DeepSpeed "[launch.py:139:main]" header or a CANN "[ERROR] HCCL error", a stamp inside a message. The
evidence keeps the physical line's number.
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.text.normalize import logical_lines
from tests.helpers.diagnose_root import root_finding

OOM_TB = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 41, in <module>',
    "    main()",
    '  File "/workspace/train.py", line 30, in main',
    "    loss.backward()",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
    "capacity; 77.13 GiB already allocated; 30.00 MiB free; 78.00 GiB reserved in total by PyTorch)",
]

PREFIXES = [
    "2023-09-14 21:27:58\t2023-09-14 21:27:58.000 [INFO] [Driver] ",
    "2023-09-14 21:27:58.000 [ERROR] [Executor] ",
    "[WARN ] [worker-3] ",
    "[5]:",
    "[12]: ",
    "2023/10/26 12:12:18 ",
    "> 2022-11-29 00:27 ",
    "[1]<stderr>:",
    "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522] ",
    "        (Worker_DP0_TP0_EP0 pid=5609) ERROR 06-04 12:45:50 [v1/executor/multiproc_executor.py:932] ",
    "10.164.0.33 [0] ",
    "2023-03-29 13:52:59 172.16.96.171 [1] ",
]


def _texts(log: str) -> list[str]:
    return [ln.text for ln in logical_lines([x.encode() for x in log.split("\n")], 1)]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_prefix_is_stripped_from_every_line(prefix: str) -> None:
    log = "\n".join(prefix + ln for ln in OOM_TB)
    assert [t.strip() for t in _texts(log)] == [ln.strip() for ln in OOM_TB]


@pytest.mark.parametrize("prefix", ["[5]:", "2023/10/26 12:12:18 ", "[INFO] [Driver] ", "10.164.0.33 [0] "])
def test_frame_keeps_its_indentation(prefix: str) -> None:
    log = "\n".join(prefix + ln for ln in OOM_TB)
    assert _texts(log) == OOM_TB


@pytest.mark.parametrize("prefix", PREFIXES)
def test_prefixed_traceback_is_read_and_evidence_keeps_its_line(prefix: str) -> None:
    head = ["job 17 started", "loading the model"]
    log = "\n".join(head + [prefix + ln for ln in OOM_TB])
    root = root_finding(log)
    assert root is not None and root.code == "RUN101", (prefix, root)
    lines = {e.to_json()["line"] for e in root.evidence}
    assert len(head) + len(OOM_TB) in lines, (prefix, root.evidence)


def test_deepspeed_platform_paste_cut_in_zero_setup() -> None:
    """The paste of v19G-cuda_oom-001's shape: the level and component under two timestamps."""
    stamp = "2023-09-14 21:27:58\t2023-09-14 21:27:58.000 [INFO] [Driver] "
    frames = [
        "model, optimizer, _, _ = deepspeed.initialize(",
        'File "/opt/conda/lib/python3.8/site-packages/deepspeed/__init__.py", line 171, in initialize',
        "engine = DeepSpeedEngine(args=args,",
        'File "/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/engine.py", line 310, in __init__',
    ]
    assert _texts("\n".join(stamp + f for f in frames)) == frames


KEPT = [
    # one bracketed tag pair alone: the message's own words (an issue's title, a one-line quote)
    "[INFO] [Driver] RuntimeError: boom",
    "[ERROR] [Rank0] something else",
    "[5]: the fifth item",
    # a level tag before a header the rows read, or before its own words
    "[INFO] [launch.py:139:main] 0 NCCL_IB_DISABLE=1",
    "[ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64",
    "[E ProcessGroupNCCL.cpp:821] [Rank 1] Watchdog caught collective operation timeout",
    "[LightGBM] [Info] Finished loading parameters",
    # a stamp inside the message
    "RuntimeError: checkpoint of 2023/10/26 12:12:18 is missing",
    "saved at 2022-11-29 00:27 to /ckpt",
    "10.164.0.33 refused the connection [0]",
]


@pytest.mark.parametrize("line", KEPT)
def test_lookalike_is_kept(line: str) -> None:
    assert _texts(f"job 17 started\n{line}\nthe end") == ["job 17 started", line, "the end"]


def test_different_soft_prefixes_on_neighbours_are_kept() -> None:
    log = "[INFO] [Driver] starting\n[ERROR] [Executor] RuntimeError: x\n[3]: three\n[4]: four"
    assert _texts(log) == log.split("\n")


def test_healthy_platform_log_stays_silent() -> None:
    stamp = "2023-09-14 21:27:58\t2023-09-14 21:27:58.000 [INFO] [Driver] "
    lines = [f"epoch {i} step {i * 10} loss 0.{i}3 lr 1e-4" for i in range(1, 9)]
    assert root_finding("\n".join(stamp + ln for ln in lines)) is None
    assert root_finding("\n".join(f"[{i % 4}]:" + ln for i, ln in enumerate(lines))) is None
