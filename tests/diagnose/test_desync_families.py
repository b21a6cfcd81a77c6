"""Desync and timeout families read at their source (reducer.cpp, ProcessGroupWrapper.cpp, ProcessGroupNCCL.cpp,
ProcessGroupGloo.cpp, distributed_c10d.py, NCCL's net_socket.cc / bootstrap.cc, Lightning's and DeepSpeed's
wrappers, torch 1.x-2.x), with the prefixes and cuts real pastes add.

- DDP's reducer: every sentence of the unused-parameter error stands for the whole (a paste keeps one),
  TORCH_DISTRIBUTED_DEBUG's per-parameter INFO line names the rank, Lightning 2.x's rewording, static graph;
  "ready twice" and DeepSpeed ZeRO's "Gradient computed twice for this partition".
- ranks in different collectives: the DETAIL fingerprints, NCCL's size check ("message truncated", also
  hard-wrapped after its colon), gloo's preamble check, DDP's join with uneven inputs.
- timeouts: the watchdog in every shape and version (its abort included), heartbeat monitor, blocking wait,
  gloo's recv timeout, monitored barrier (the rank it names is the suspect), a main-process-first barrier
  whose store wait timed out, and watchdog lines of several ranks that disagree at one SeqNum (a desync).
Decoys with the same words stay silent.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - ", "E       "]


def _facts(f: Any) -> dict[str, Any]:
    return dict(f.facts or {})


# --- DDP's reducer: each sentence of its unused-parameter error, alone -------------------------------------

REDUCER_SENTENCES = [
    # 1.2-2.x, its first sentence under RuntimeError
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss.",
    # the same message's later lines, each kept alone by a paste
    "This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by",
    "You can enable unused parameter detection by (1) passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`; (2) making sure all `forward` function outputs participate in calculating loss.",
    "If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).",
    "Parameter indices which did not receive grad for rank 1: 3 4 5",
    "Parameters which did not receive grad for rank 0: decoder.fc.weight, decoder.fc.bias",
    " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error",
    # 1.9+ with find_unused_parameters=True already set
    "Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` outputs participate in computing loss. You can fix this by making sure all `forward` function outputs participate in calculating loss.",
    # 1.0-1.1
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing its output (the return value of `forward`).",
    # Lightning 2.x's rewording (strategies/ddp.py)
    "RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by training_step. If this is intentional, you must enable the detection of unused parameters in DDP, either by setting the string value `strategy='ddp_find_unused_parameters_true'` or by setting the flag in the strategy with `strategy=DDPStrategy(find_unused_parameters=True)`.",
    # static_graph=True (2.x)
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your training graph has changed in this iteration, e.g., one parameter is used in first iteration, but then got unused in the second iteration. this is not compatible with static_graph set to True.",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", REDUCER_SENTENCES)
def test_each_sentence_of_the_reducer_error_is_the_unused_parameter_family(prefix: str, line: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.code == "RUN202" and f.category == "collective_mismatch", (line, f)


def test_the_detail_info_lines_name_the_rank_and_parameters() -> None:
    log = (
        "[I reducer.cpp:1403] [Rank 1] Parameter: decoder.fc.weight did not get gradient in backwards pass.\n"
        "[I reducer.cpp:1403] [Rank 1] Parameter: decoder.fc.bias did not get gradient in backwards pass.\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN202"
    assert _facts(f)["rank"] == 1
    assert _facts(f)["unused_params"] == ["decoder.fc.weight", "decoder.fc.bias"]


def test_a_reducer_fragment_outranks_the_launchers_exit_record() -> None:
    # the paste began at the message's last line; the agent's exit record follows (v3 StyleAvatar shape)
    log = (
        " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 14910) of binary: /opt/conda/envs/py38/bin/python\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN202", f


def test_lightning_wrapping_is_marked() -> None:
    f = _root(REDUCER_SENTENCES[9])
    assert f is not None and _facts(f).get("framework") == "lightning"


READY_TWICE = [
    "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function.",
    "Parameter at index 55 has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
    "Parameter at index 3 with name module.encoder.weight has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
    # DeepSpeed ZeRO-1/2's reduction hook (the f-string's continuation spaces kept)
    "AssertionError: The parameter 167 has already been reduced.             Gradient computed twice for this partition.             Multiple gradient reduction is currently not supported",
    "AssertionError: The parameter model.layers.35.mlp.down_proj.weight has already been reduced. Gradient computed twice for this partition.",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", READY_TWICE)
def test_ready_twice_in_ddp_and_zero(prefix: str, line: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.code == "RUN203" and f.category == "collective_mismatch", (line, f)


def test_zero_names_its_parameter() -> None:
    assert {k: _facts(_root(READY_TWICE[3])).get(k) for k in ("framework", "param_index")} == {
        "framework": "deepspeed",
        "param_index": 167,
    }
    assert _facts(_root(READY_TWICE[4]))["param"] == "model.layers.35.mlp.down_proj.weight"
    wrapped = (
        "AssertionError: The parameter 666 has already been reduced.                     \n"
        "   Gradient computed twice for this partition.                     \n"
        "   Multiple gradient reduction is currently not supported \n"
    )
    f = _root(wrapped)
    assert f is not None and f.code == "RUN203" and _facts(f)["param_index"] == 666, f


# --- ranks in different collectives -----------------------------------------------------------------------

MISMATCH = [
    # (log, facts that must hold)
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE, TensorShape=[10], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=7, OpType=BROADCAST, TensorShape=[10], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST",
        {"seq": 7, "ranks": [0, 1]},
    ),
    (
        # 1.10-1.12: "inconsistent collective", no sequence number
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
        {"ranks": [0]},
    ),
    (
        # the message wrapped by a paste: one fingerprint a line
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective:\n"
        "CollectiveFingerPrint(SequenceNumber=1649, OpType=BARRIER, TensorShape=[1], TensorDtypes=Float),\n"
        "but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=GATHER, TensorShape=[3], TensorDtypes=Float).\n",
        {},
    ),
    (
        "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated : receiving 1048576 bytes instead of 65536",
        {"bytes": 1048576, "expected_bytes": 65536, "peer": "192.168.161.30"},
    ),
    (
        # the same WARN hard-wrapped after its colon
        "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :\nreceiving 1048576 bytes instead of 65536\n",
        {"bytes": 1048576, "expected_bytes": 65536, "peer": "192.168.161.30"},
    ),
    (
        # 2.21+: the WARN says it itself
        "node1:1234:5678 [0] transport/net_socket.cc:636 NCCL WARN NET/Socket : peer 10.0.0.2<41234> message truncated : receiving 4194304 bytes instead of 2097152. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
        {"bytes": 4194304, "expected_bytes": 2097152},
    ),
    (
        # 2.12-2.18: the hint joined by the C string's line continuation, its indentation kept
        "node1:1234:5678 [0] transport/net_socket.cc:503 NCCL WARN NET/Socket : peer 10.0.0.2<41234> message truncated : receiving 65536 bytes instead of 4096. If you believe your socket network is in healthy state,           there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
        {"bytes": 65536, "expected_bytes": 4096, "peer": "10.0.0.2"},
    ),
    (
        # NET/IB 2.12+: "collective mismatch error, local size ... remote size ..."
        "node1:1234:5678 [0] transport/net_ib.cc:1187 NCCL WARN NET/IB : req 0/1 tag 7 peer 10.0.0.2<60412> collective mismatch error, local size 1048576 remote size 524288",
        {"bytes": 524288, "expected_bytes": 1048576},
    ),
    (
        # 2.4-2.7: no peer
        "node1:1234:5678 [0] NCCL WARN NET/Socket : message truncated : receiving 262144 bytes instead of 131072",
        {"bytes": 262144, "expected_bytes": 131072},
    ),
    # (bootstrap.cc's own "Message truncated : received ..." is NCCL's out-of-band exchange, no collective of
    # the program: an internal error, tests/diagnose/test_nccl_families3.py)
    (
        # under torch's wrapper, as its "Last error:"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
        "Last error:\n"
        "NET/Socket : peer 10.0.0.2<41234> message truncated : receiving 1024 bytes instead of 256\n",
        {"bytes": 1024, "expected_bytes": 256},
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 8 vs 4",
        {"bytes": 8, "expected_bytes": 4, "backend": "gloo"},
    ),
    (
        # the same check aborting the process (gloo::EnforceNotMet thrown from a gloo thread)
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
        "  what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 6232 vs 4\n",
        {"bytes": 6232, "expected_bytes": 4},
    ),
    (
        "Unhandled exception: N4gloo13EnforceNotMetE\n"
        "what(): [enforce fail at ... gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 3096 vs 16\n",
        {"bytes": 3096, "expected_bytes": 16},
    ),
    (
        # Accelerate's debug mode, its exception on one line
        "accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.\n"
        "\n"
        "Operation: `accelerate.utils.operations.broadcast`\n"
        "Input shapes:\n"
        "  - Process 0: [1, 5]\n"
        "  - Process 1: [1, 2, 5]\n"
        "  - Process 2: [1, 5]\n",
        {"op": "broadcast", "ranks": [1]},
    ),
    (
        # ... and with the message on the line after the exception's name (docs' shape)
        "accelerate.utils.operations.DistributedOperationException:\n"
        "\n"
        "Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.\n"
        "\n"
        "Operation: `accelerate.utils.operations.gather`\n"
        "Input shapes:\n"
        "  - Process 0: [8, 128]\n"
        "  - Process 1: [6, 128]\n",
        {"op": "gather", "shapes_by_rank": {"0": "[8, 128]", "1": "[6, 128]"}},
    ),
    (
        # DDP's join with throw_on_early_termination=True
        "RuntimeError: Detected at least one rank that exhausted inputs. Throwing across all ranks.",
        {"kind": "uneven_inputs"},
    ),
    (
        # watchdog lines of several ranks at one SeqNum that disagree on NumelIn: rank 7 is the odd one
        "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=13807, OpType=ALLREDUCE, NumelIn=11274112, NumelOut=11274112, Timeout(ms)=1800000) ran for 1800221 milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:475] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=13807, OpType=ALLREDUCE, NumelIn=11274112, NumelOut=11274112, Timeout(ms)=1800000) ran for 1800233 milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:475] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=13807, OpType=ALLREDUCE, NumelIn=10942336, NumelOut=10942336, Timeout(ms)=1800000) ran for 1800289 milliseconds before timing out.\n",
        {"seq": 13807, "ranks": [7]},
    ),
    (
        # the same on OpType, 2.2+ prefixes
        "[rank0]:[E1001 12:00:00.123456789 ProcessGroupNCCL.cpp:616] [PG 0 Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
        "[rank1]:[E1001 12:00:00.223456789 ProcessGroupNCCL.cpp:616] [PG 0 Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n"
        "[rank2]:[E1001 12:00:00.323456789 ProcessGroupNCCL.cpp:616] [PG 0 Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600014 milliseconds before timing out.\n",
        {"seq": 42, "ranks": [2]},
    ),
]


def test_timeouts_of_different_process_groups_at_one_number_are_no_mismatch() -> None:
    # SeqNum counts per process group: PG 0's ALLREDUCE 42 and PG 2's ALLGATHER 42 are different works
    log = (
        "[rank0]:[E1001 12:00:00.1 ProcessGroupNCCL.cpp:616] [PG 0 Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
        "[rank1]:[E1001 12:00:00.2 ProcessGroupNCCL.cpp:616] [PG 2 Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLGATHER, NumelIn=8, NumelOut=16, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n"
        "[rank2]:[E1001 12:00:00.3 ProcessGroupNCCL.cpp:616] [PG 0 Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600014 milliseconds before timing out.\n"
    )
    f = _root(log)
    assert f is not None and f.category == "collective_timeout", f


@pytest.mark.parametrize("log,facts", MISMATCH)
def test_ranks_in_different_collectives_are_a_mismatch(log: str, facts: dict[str, Any]) -> None:
    f = _root(log)
    assert f is not None and f.category == "collective_mismatch", (log[:120], f)
    got = _facts(f)
    assert {k: got.get(k) for k in facts} == facts, got


# --- timeouts in every shape ------------------------------------------------------------------------------

TIMEOUTS = [
    # (log, code, rank, facts that must hold)
    (
        "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.",
        "RUN151",
        1,
        {"seq": 668, "op": "ALLREDUCE", "timeout_ms": 600000},
    ),
    (
        # the abort that follows it (2.x), exit -6 from the agent: consequences of the timeout
        "[rank3]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1024, OpType=_ALLGATHER_BASE, NumelIn=4096, NumelOut=32768, Timeout(ms)=1800000) ran for 1800047 milliseconds before timing out.\n"
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1024, OpType=_ALLGATHER_BASE, NumelIn=4096, NumelOut=32768, Timeout(ms)=1800000) ran for 1800047 milliseconds before timing out.\n"
        "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6) local_rank: 3 (pid: 4711) of binary: /usr/bin/python\n",
        "RUN151",
        3,
        {"seq": 1024, "op": "_ALLGATHER_BASE", "timeout_ms": 1800000},
    ),
    (
        # the abort alone: its what() carries the record
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1803300 milliseconds before timing out.\n"
        "Fatal Python error: Aborted\n",
        "RUN151",
        0,
        {"seq": 5, "op": "BROADCAST"},
    ),
    (
        "[Rank 0] Caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, TensorShape=[1], Timeout(ms)=60000) ran for 60044 milliseconds before timing out.",
        "RUN151",
        0,
        {"op": "ALLREDUCE", "timeout_ms": 60000},
    ),
    (
        "RuntimeError: [Rank 2] Work WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=5000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).",
        "RUN151",
        None,
        {"seq": 9, "op": "ALLREDUCE"},
    ),
    (
        "[rank1]:[E1001 12:00:00.123456789 ProcessGroupNCCL.cpp:1390] [PG 0 (default_pg) Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2",
        "RUN152",
        1,
        {},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
        "RUN153",
        None,
        {"timeout_ms": 1800000},
    ),
    (
        # 1.10-1.13: the communicator's abort carries the reason
        "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=35, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800494 milliseconds before timing out.",
        "RUN151",
        1,
        {"seq": 35, "timeout_ms": 1800000},
    ),
    (
        # 2.4+: the watchdog's own thread, terminated by the timeout
        "[rank2]:[E1105 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLGATHER, NumelIn=2, NumelOut=16, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
        "RUN151",
        2,
        {"seq": 1234, "op": "ALLGATHER"},
    ),
    (
        # 2.2+: which work the watchdog stopped at, without the record
        "[rank2]:[E1105 10:00:00.000000000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 2] Exception (either an error or timeout) detected by watchdog at work: 1234, last enqueued NCCL work: 1235, last completed NCCL work: 1233.",
        "RUN151",
        2,
        {"seq": 1234},
    ),
    (
        "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api, or other deadlock-prone behaviors.",
        "RUN152",
        0,
        {},
    ),
    (
        # DeepSpeed's launcher records the abort after it
        "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=86, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600340 milliseconds before timing out.\n"
        "[2024-03-01 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=3'] exits with return code = -6",
        "RUN151",
        3,
        {"seq": 86, "exitcode": -6},
    ),
    (
        # accelerate launch's CalledProcessError (SIGABRT), the record first
        "subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' died with <Signals.SIGABRT: 6>.\n"
        "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1806947 milliseconds before timing out.",
        "RUN151",
        0,
        {"seq": 1, "op": "BROADCAST"},
    ),
    (
        # the number hidden by the paste
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting xxxx ms for recv operation to complete",
        "RUN153",
        None,
        {"direction": "recv"},
    ),
    (
        # the watchdog's teardown alone, then the agent's exit -6: the abort is the teardown's doing
        "[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.\n"
        "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 123) of binary: /usr/bin/python",
        "RUN151",
        None,
        {"exitcode": -6},
    ),
    (
        # stack-only: the watchdog's frames without its message line
        "frame #2: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f1c2a1d5a42 in /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #3: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f1c2a1dcb33 in /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so)",
        "RUN151",
        None,
        {},
    ),
    (
        # 2.4+: "[PG ID 0 PG GUID 0(default_pg) Rank 1] "
        "[rank1]:[E1001 12:00:00.123 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.",
        "RUN151",
        1,
        {"seq": 5, "op": "ALLREDUCE", "timeout_ms": 600000},
    ),
    (
        "RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 300000ms for send operation to complete",
        "RUN153",
        None,
        {"timeout_ms": 300000},
    ),
]


@pytest.mark.parametrize("prefix", ["", "2025-01-02 03:04:05 ", "(RayTrainWorker pid=4711) "])
@pytest.mark.parametrize("log,code,rank,facts", TIMEOUTS)
def test_timeouts_in_every_shape(
    prefix: str, log: str, code: str, rank: Optional[int], facts: dict[str, Any]
) -> None:
    f = _root("".join(prefix + ln + "\n" for ln in log.splitlines()))
    assert f is not None and f.category == "collective_timeout" and f.code == code, (log[:100], f)
    got = _facts(f)
    assert {k: got.get(k) for k in facts} == facts, got
    if rank is not None:
        assert got.get("rank") == rank, got


MONITORED = [
    # (log, suspect ranks)
    ("RuntimeError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 2000 ms", [1]),
    (
        # the gloo error it carries (the peer that went away) is the suspect's echo, not a network fault
        "RuntimeError: Rank 1 failed to pass monitoredBarrier in 2000 ms\n"
        " Original exception:\n"
        "[gloo/transport/tcp/pair.cc:598] Connection closed by peer [2401:db00:eef0:1100:3560:0:1c05:25d]:8594\n",
        [1],
    ),
    ("RuntimeError: [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms", [1, 2]),
    (
        # ProcessGroupWrapper's (TORCH_DISTRIBUTED_DEBUG=DETAIL) barrier before each collective
        "RuntimeError: ProcessGroupWrapper: Monitored Barrier encountered error running collective: CollectiveFingerPrint(SequenceNumber=31, OpType=ALLREDUCE, TensorShape=[1], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))). Error: \n"
        "[Rank 0]: Rank 3 failed to pass monitoredBarrier in 1800000 ms\n"
        " Original exception: \n"
        "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete\n",
        [3],
    ),
]


@pytest.mark.parametrize("log,suspects", MONITORED)
def test_a_monitored_barrier_names_the_rank_it_waited_for(log: str, suspects: list[int]) -> None:
    f = _root(log)
    assert f is not None and f.category == "collective_timeout", (log[:100], f)
    got = _facts(f)
    assert sorted(got["suspect_ranks"]) == sorted(got["missing_ranks"]) == suspects, got


def test_a_monitored_barrier_explains_the_exit_of_the_rank_that_reports_it() -> None:
    log = (
        "[rank0]: RuntimeError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 30000 ms\n"
        "E0101 10:00:00.000000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 4711) of binary: /usr/bin/python\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN153" and _facts(f)["suspect_ranks"] == [1], f


MAIN_FIRST = [
    # (frame of the barrier, store error)
    (
        '  File "/usr/lib/python3/site-packages/transformers/training_args.py", line 2035, in main_process_first',
        "RuntimeError: [6] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
    ),
    (
        '  File "/usr/lib/python3/site-packages/accelerate/state.py", line 400, in wait_for_everyone',
        "torch.distributed.DistBackendError: [6] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0",
    ),
    (
        # 1.x: the store's own wait timeout
        '  File "/x/accelerate/accelerator.py", line 880, in local_main_process_first',
        "RuntimeError: [6] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Timeout waiting for key: default_pg/0/0 after 1800000 ms",
    ),
    (
        '  File "/src/ultralytics/utils/torch_utils.py", line 58, in torch_distributed_zero_first',
        "RuntimeError: [6] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
    ),
]


@pytest.mark.parametrize("frame,error", MAIN_FIRST)
def test_a_store_timeout_inside_a_main_process_first_barrier_is_a_timeout(frame: str, error: str) -> None:
    log = (
        "Traceback (most recent call last):\n" + frame + "\n"
        "    dist.barrier()\n"
        '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 3696, in barrier\n'
        "    work = default_pg.barrier(opts=opts)\n" + error + "\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN151" and f.category == "collective_timeout", f
    assert _facts(f)["rank"] == 6 and _facts(f)["waited_for_rank"] == 0


def test_the_same_store_timeout_outside_such_a_barrier_stays_the_stores() -> None:
    f = _root(
        "RuntimeError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
        "key-value store by key '0', but store->get('0') got error: Socket Timeout\n"
    )
    assert f is not None and f.category == "rendezvous", f


def test_a_store_reset_inside_such_a_barrier_is_not_a_timeout() -> None:
    # the main process died: its store went with it, not a timeout
    f = _root(
        '  File "/x/transformers/training_args.py", line 2035, in main_process_first\n'
        "    dist.barrier()\n"
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
        "key-value store by key '0', but store->get('0') got error: Connection reset by peer\n"
    )
    assert f is not None and f.category != "collective_timeout", f


# --- DeepSpeed ZeRO-3: a trace invalidated, then no step -------------------------------------------------

TRACE = "Invalidate trace cache @ step 1: expected module 15, but got module 313"


@pytest.mark.parametrize(
    "log",
    [
        # the line glued to the progress bar, the job's last words (a hang)
        "{'loss': 6.8843, 'learning_rate': 0.0009838432886246189, 'epoch': 0.03}\n"
        "  3%|▎         | 270/9847 [06:18<3:39:12,  1.37s/it]" + TRACE + "\n",
        # on its own line, then the user's Ctrl-C
        TRACE
        + "\n^C[2024-10-29 01:28:46,598] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 489270\n",
        "Invalidate trace cache @ step 0 and module 36666: cache has only 0 modules\n",
    ],
)
def test_a_zero3_trace_invalidated_before_a_hang_is_a_desync(log: str) -> None:
    f = _root(log)
    assert f is not None and f.category == "collective_mismatch", f
    assert _facts(f)["kind"] == "zero3_trace_invalidated"


def test_the_watchdog_timeouts_after_it_are_its_consequence() -> None:
    log = (
        "  3%|▎         | 270/9847 [05:50<3:17:42,  1.24s/it]Invalidate trace cache @ step 1: expected module 25, but got module 323\n"
        "[E ProcessGroupNCCL.cpp:467] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=211067, OpType=_ALLGATHER_BASE, NumelIn=2359296, NumelOut=18874368, Timeout(ms)=1800000) ran for 1800001 milliseconds before timing out.\n"
    )
    findings = [f for f in diagnose_sources([("job.log", log)]) if f.severity.value in ("warn", "fail")]
    assert [f.category for f in findings] == ["collective_mismatch", "collective_timeout"], findings
    assert _facts(findings[0])["expected_module"] == 25 and _facts(findings[0])["got_module"] == 323


def test_a_trace_invalidated_while_the_job_goes_on_is_silent() -> None:
    log = (
        TRACE + "\n"
        "{'loss': 0.0026, 'grad_norm': 5.830838200650654, 'learning_rate': 9.99576756460688e-07, 'epoch': 0.0}\n"
    )
    assert _root(log) is None


def test_the_teardown_next_to_an_nccl_error_stays_its_consequence() -> None:
    log = (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3\n"
        "[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.\n"
    )
    f = _root(log)
    assert f is not None and f.category != "collective_timeout", f


def test_a_mismatch_outranks_the_closed_connection_it_causes() -> None:
    log = (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:29500\n"
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3, OpType=ALLREDUCE, TensorShape=[4], TensorDtypes=Float), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3, OpType=BROADCAST, TensorShape=[4], TensorDtypes=Float).\n"
    )
    f = _root(log)
    assert f is not None and f.category == "collective_mismatch", f


# --- decoys -----------------------------------------------------------------------------------------------

DECOYS = [
    # torch's performance warning with find_unused_parameters=True and nothing unused
    "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration,  which can adversely affect performance. If your model indeed never has any unused parameters in the forward pass, consider turning this flag off. Note that this warning may be a false positive if your model has flow control causing later iterations to have unused parameters. (function operator())",
    # DETAIL's trace of every collective, healthy
    "[I ProcessGroupWrapper.cpp:562] [Rank 0] Running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))\n"
    "[I ProcessGroupWrapper.cpp:562] [Rank 1] Running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))\n",
    # DDP's join used on purpose, without throwing
    "INFO: Using DDP's join context manager for uneven inputs (throw_on_early_termination=False)",
    # a docs sentence about the static graph option
    "static_graph (bool): When set to True, DDP knows the trained graph is static.",
    # a checkpoint of another shape: "size mismatch" of a state_dict, not of a collective
    "RuntimeError: Error(s) in loading state_dict for Net:\n"
    "\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([100, 512]).",
    # NCCL tuning INFO around sizes
    "node1:1234:5678 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
]


@pytest.mark.parametrize("log", DECOYS)
def test_healthy_lines_with_the_same_words_are_silent(log: str) -> None:
    assert _root(log) is None
