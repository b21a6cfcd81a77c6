"""Ranks that disagree on the collective or the model, and killed ranks whose record was pasted in part.
Each case is written from the text at its source (named beside it): torch/csrc/distributed/c10d/reducer.cpp
rebuild_buckets (1.7-1.10 and 1.11+ wording), TensorFlow
core/common_runtime/collective_param_resolver_local.cc
(CompleteGroupLocal), torch/utils/data/_utils/signal_handling.py / dataloader.py, and torchrun's
elastic/multiprocessing/errors (ChildFailedError table) and api.py ("failed (exitcode: ...) local_rank: ...").
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.api import diagnose_sources


def _root(text: str) -> tuple[Optional[str], dict[str, Any]]:
    real = [f for f in diagnose_sources([("job.log", text)]) if f.severity.value != "info"]
    return (real[0].code, dict(real[0].facts)) if real else (None, {})


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # reducer.cpp 1.7-1.10: TORCH_INTERNAL_ASSERT(replicas_[0].size() == rebuilt_param_indices_.size(),
        # ...)
        (
            "RuntimeError: replicas_[0].size() == rebuilt_param_"
            'indices_.size() INTERNAL ASSERT FAILED at "/pytorch/'
            'torch/csrc/distributed/c10d/reducer.cpp":1326, p'
            "lease report a bug to PyTorch. rebuilt parameter "
            "indices size is not same as original model parameters size.538 versus 1076000",
            {"model_params": 538, "rebuilt_indices": 1076000},
        ),
        # reducer.cpp 1.11+: params_.size() == rebuilt_param_indices_.size(), "Original model param size is: "
        (
            "RuntimeError: params_.size() == rebuilt_param_indic"
            'es_.size() INTERNAL ASSERT FAILED at "../torch/csrc/'
            'distributed/c10d/reducer.cpp":1543, please report a'
            " bug to PyTorch. rebuilt parameter indices size is "
            "not same as original model parameters size.Origin"
            "al model param size is: 12 versus rebuilt params "
            "size of: 24",
            {"model_params": 12, "rebuilt_indices": 24},
        ),
        # collective_param_resolver_local.cc CompleteGroupLocal: device type and group size checks
        (
            "2023-06-13 13:30:32.188736: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
            "BaseCollectiveExecutor::StartAbort INTERNAL: Dev"
            "ice /job:worker/replica:0/task:1/device:GPU:0 is "
            "joining a group with incompatible device typeCPU (group_key=3)",
            {"device": "/job:worker/replica:0/task:1/device:GPU:0"},
        ),
        (
            "tensorflow.python.framework.errors_impl.InternalErro"
            "r: Device /job:worker/replica:0/task:0/device:CPU:0 "
            "is joining a group with size2, but that group has size 4 (group_key=1)",
            {"device": "/job:worker/replica:0/task:0/device:CPU:0"},
        ),
    ],
)
def test_ranks_that_disagree_on_model_or_group(text: str, facts: dict[str, Any]) -> None:
    code, got = _root(text)
    assert code == C.COLLECTIVE_MISMATCH.code
    assert facts.items() <= got.items()


@pytest.mark.parametrize(
    ("text", "code", "facts"),
    [
        # torchrun's table pasted from its "<script> FAILED" header down, without the ChildFailedError line
        (
            "=========================================================\nscripts.train FAILED\n"
            "---------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
            "------------------------------------------------"
            "---------\nRoot Cause (first observed failure):\n"
            "[0]:\n  time      : 2025-03-04_15:41:29\n  host      : node1\n  rank      : 0 (local_rank: 0)\n"
            "  exitcode  : -11 (pid: 3182701)\n  error_file: <N/A>\n"
            "  traceback : Signal 11 (SIGSEGV) received by PID 3182701\n"
            "=========================================================\n",
            C.FATAL_SIGNAL.code,
            {"exitcode": -11, "signal": "SIGSEGV"},
        ),
        # api.py's "failed (exitcode: -9) local_rank: 0 (pid: 1) of binary: ..." garbled by the paste
        (
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 53038 closing\n"
            "ERROR:torch.distributed.elastic.multiprocessing.a"
            "pi:failed (exitcode: -9) local_rankroot/anaconda3/"
            "envs/x/bin/python\n",
            C.HOST_OOM_KILLED.code,
            {"exitcode": -9},
        ),
        # dataloader.py _try_get_data "DataLoader worker (pid(s) ...) is killed by signal: Killed.", as
        # re-typed
        (
            "RuntimeError: Dataloader worker (pid 15623) is killed by signaled: Killed",
            C.HOST_OOM_KILLED.code,
            {},
        ),
    ],
)
def test_killed_records_pasted_in_part(text: str, code: str, facts: dict[str, Any]) -> None:
    got_code, got = _root(text)
    assert got_code == code
    assert facts.items() <= got.items()


def test_a_table_under_its_child_failed_error_is_read_once() -> None:
    text = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "============================================================\ntrain.py FAILED\n"
        "------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\nRoot Cause (first observed failure):\n"
        "[0]:\n  time      : 2024-01-01_12:00:00\n  host      : node-1\n  rank      : 3 (local_rank: 3)\n"
        "  exitcode  : -11 (pid: 1234)\n  error_file: <N/A>\n  "
        "traceback : Signal 11 (SIGSEGV) received by PID 1234\n"
    )
    real = [f for f in diagnose_sources([("job.log", text)]) if f.severity.value != "info"]
    assert [f.code for f in real] == [C.FATAL_SIGNAL.code]


def test_the_agent_signalled_alone_is_a_job_stopped_from_outside() -> None:
    # elastic/multiprocessing/api.py _terminate_process_handler: raise SignalException(f"Process {os.getpid()}
    # got signal: {sigval}", sigval=sigval); SIGHUP when the SSH session of a job without nohup closed
    code, f = _root(
        "train.sh: torch.distributed.elastic.multiprocessing.api.SignalException: Process 8665 got signal: 1"
    )
    assert code == C.RANK_EXITED.code and f["launcher_signal"] == "SIGHUP"
