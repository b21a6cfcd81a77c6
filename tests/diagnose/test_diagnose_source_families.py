"""Message families read at their source, in every shape their source prints them (not the one
sentence a paste showed): each case is written from the format string of the code that prints it
(torch's launch.py / elastic agent / ProcessGroupGloo.cpp / ProcessGroupNCCL.cpp / socket.cpp,
NCCL's include/alloc.h and the aws-ofi-nccl plugin, the kernel's mm/oom_kill.c, Ray's
node_manager.cc and memory monitor, Python's
subprocess.CalledProcessError), with the prefixes and wrappings real logs add."""

from __future__ import annotations

from typing import Any

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from tests.helpers.diagnose_root import root_finding as _root

# -- launcher exit records: subprocess.CalledProcessError of torch 1.x's torch.distributed.launch ---------------

_LAUNCH_TB = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/launch.py", line 253, in main\n'
    "    raise subprocess.CalledProcessError(returncode=process.returncode,\n"
)


@pytest.mark.parametrize(
    ("tail", "code", "signal", "exitcode"),
    [
        ("died with <Signals.SIGKILL: 9>.", "RUN121", "SIGKILL", -9),
        ("died with <Signals.SIGSEGV: 11>.", "RUN131", "SIGSEGV", -11),
        ("died with unknown signal 77.", "RUN133", None, -77),
        ("returned non-zero exit status 1.", "RUN133", None, 1),
    ],
)
def test_torch_launch_called_process_error_in_every_form(
    tail: str, code: str, signal: Any, exitcode: int
) -> None:
    log = (
        _LAUNCH_TB + "subprocess.CalledProcessError: Command '['/opt/conda/bin/python', '-u', 'train.py', "
        f"'--local_rank=1']' {tail}\n"
    )
    root = _root(log)
    assert root is not None and root.code == code
    assert root.facts["exitcode"] == exitcode and root.facts.get("local_rank") == 1
    if signal:
        assert root.facts["signal"] == signal


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "[2024-05-01 10:00:00,123] torch.distributed.elastic.multiprocessing.api: [ERROR] ",
        "node-7: E0501 10:00:00.123000 140 torch/distributed/elastic/multiprocessing/api.py:826] ",
    ],
)
def test_elastic_agent_exit_line_behind_host_and_timestamp_prefixes(prefix: str) -> None:
    root = _root(f"{prefix}failed (exitcode: -9) local_rank: 2 (pid: 4242) of binary: /usr/bin/python3\n")
    assert root.code == "RUN121" and root.facts["exitcode"] == -9 and root.facts["pid"] == 4242
    assert root.facts["local_rank"] == 2 and root.facts["signal"] == "SIGKILL"


def test_childfailederror_table_flattened_onto_one_line() -> None:
    log = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ==================== train.py FAILED "
        "-------------------- Failures: <NO_OTHER_FAILURES> -------------------- Root Cause (first observed failure): "
        "[0]: time : 2024-01-01_12:00:00 host : node-1 rank : 3 (local_rank: 3) exitcode : -11 (pid: 1234) "
        "error_file: <N/A> traceback : Signal 11 (SIGSEGV) received by PID 1234 ====================\n"
    )
    root = _root(log)
    assert root.code == "RUN131"
    assert (root.facts["rank"], root.facts["exitcode"], root.facts["pid"], root.facts["host"]) == (
        3,
        -11,
        1234,
        "node-1",
    )
    assert root.facts["signal"] == "SIGSEGV"


# -- causality: the watchdog's own abort is the timeout's consequence -------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        "[Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=806, OpType=BROADCAST, "
        "Timeout(ms)=1800000) ran for 1801027 milliseconds before timing out.",
        "[PG ID 0 PG GUID 0(default_pg) Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=806, "
        "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1801027 milliseconds before timing out.",
    ],
)
def test_watchdog_abort_exit_minus_6_is_a_consequence_of_the_timeout(record: str) -> None:
    log = (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        f"  what():  {record}\n"
        + "".join(
            f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {p} closing signal SIGTERM\n"
            for p in range(561635, 561642)
        )
        + "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 7 (pid: 561642) "
        "of binary: /usr/bin/python\n"
    )
    root = _root(log)
    assert root.code == "RUN151" and root.facts["seq"] == 806 and root.facts["op"] == "BROADCAST"


def test_an_abort_without_any_timeout_or_error_stays_a_fatal_signal() -> None:
    root = _root(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 9) "
        "of binary: /usr/bin/python\n"
    )
    assert root.code == "RUN131" and root.facts["signal"] == "SIGABRT"


# -- monitored barrier: the rank that reports is not the suspect ------------------------------------------------


@pytest.mark.parametrize(
    "sentence_end",
    ["Please check rank 0 logs for faulty rank.", "Please check rank 0 logs for the faulty rank."],
)
def test_monitored_barrier_on_a_non_zero_rank_points_at_rank_0(sentence_end: str) -> None:
    log = (
        f"[rank3]: RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors while waiting "
        f"for send/recv from rank 0. {sentence_end}\n"
        "[rank3]:  Original exception: \n"
        "[rank3]: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 600000ms for "
        "send operation to complete\n"
    )
    root = _root(log)
    assert root.category == "collective_timeout"
    assert root.facts["suspect_ranks"] == [0] and root.facts["reporter_rank"] == 3


def test_monitored_barrier_on_rank_0_names_the_missing_ranks_as_suspects() -> None:
    root = _root("RuntimeError: Ranks 1, 3 failed to pass monitoredBarrier in 30000 ms\n")
    assert root.code == "RUN153" and root.facts["suspect_ranks"] == [1, 3]


# -- stack-only pastes --------------------------------------------------------------------------------------------

_FRAMES = (
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in /x/libc10.so)\n"
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
    "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f in /x/libtorch_cuda.so)\n"
    "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f in /x/libtorch_cuda.so)\n"
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f in /x/libtorch_cuda.so)\n"
)


def test_a_watchdog_stack_without_its_message_is_a_collective_timeout() -> None:
    root = _root(
        _FRAMES + "\nException raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1521 (most recent call first):\n"
    )
    assert root.code == "RUN151" and root.facts["from_stack"] is True


def test_the_stack_yields_to_the_message_line_of_the_same_timeout() -> None:
    log = (
        "[rank1]:[E1001 12:00:00.1 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600100 "
        "milliseconds before timing out.\n" + _FRAMES
    )
    findings = diagnose_sources([("job.log", log)])
    assert findings[0].code == "RUN151" and findings[0].facts["seq"] == 12
    assert not any(f.facts.get("from_stack") for f in findings)


def test_an_nccl_error_stack_through_the_watchdog_is_not_a_timeout() -> None:
    log = (
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException() + 0x80 (0x7f in /x/libtorch_cuda.so)\n"
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f in /x/libtorch_cuda.so)\n"
    )
    assert _root(log) is None


# -- desync seen in the watchdog records of several ranks ------------------------------------------------------


def _wd(rank: int, op: str, numel: int, seq: int = 4084) -> str:
    return (
        f"[rank{rank}]:[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for "
        f"60007{rank} milliseconds before timing out.\n"
    )


@pytest.mark.parametrize(("odd", "why"), [(("BROADCAST", 56623104), "op"), (("ALLREDUCE", 1024), "size")])
def test_ranks_timing_out_in_different_collectives_at_one_seqnum_are_a_desync(
    odd: tuple[str, int], why: str
) -> None:
    log = _wd(1, "ALLREDUCE", 4821568) + _wd(2, "ALLREDUCE", 4821568) + _wd(3, *odd)
    root = _root(log)
    assert root.category == "collective_mismatch", why
    assert root.facts["suspect_ranks"] == [3] and root.facts["seq"] == 4084
    assert root.facts["ops_by_rank"]["3"] == odd[0]


def test_agreeing_watchdog_records_and_a_tie_on_sizes_that_may_differ_stay_timeouts() -> None:
    assert _root(_wd(1, "ALLREDUCE", 8) + _wd(2, "ALLREDUCE", 8)).code == "RUN151"
    assert (
        _root(_wd(1, "SEND", 8, 3) + _wd(2, "RECV", 8, 3) + _wd(3, "RECV", 8, 3)).code == "RUN151"
    )  # p2p pairs
    assert _root(_wd(1, "ALLREDUCE", 8) + _wd(2, "BROADCAST", 8)).code == "RUN151"  # a tie on OpType
    # all_to_all_single with uneven splits and scatter's root hold other sizes than their peers
    assert _root(_wd(1, "ALLTOALL_BASE", 8) + _wd(2, "ALLTOALL_BASE", 64)).code == "RUN151"
    assert _root(_wd(1, "SCATTER", 8) + _wd(2, "SCATTER", 64)).code == "RUN151"


@pytest.mark.parametrize(
    ("one", "two"),
    [(("BROADCAST", 64), ("BROADCAST", 24084544)), (("ALLREDUCE", 4821568), ("ALLREDUCE", 1024))],
)
def test_two_ranks_in_different_collectives_at_one_seqnum_are_a_desync_without_a_suspect(
    one: Any, two: Any
) -> None:
    root = _root(_wd(3, *one, seq=7219) + _wd(2, *two, seq=7219))
    assert root.code == "RUN201" and root.facts["seq"] == 7219 and "suspect_ranks" not in root.facts
    assert root.facts["numel_in_by_rank"] == {"2": two[1], "3": one[1]}


# -- kernel and platform OOM records -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "pid", "cgroup"),
    [
        (
            "[2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, "
            "oom_score_adj=829\n[2612362.231465] CPU: 6 PID: 208253 Comm: python Tainted: P O 4.15.15 #1\n"
            "[2612362.231467] Call Trace:\n[2612362.231483]  oom_kill_process+0x21c/0x430\n"
            "[2612362.231487]  mem_cgroup_out_of_memory+0x4b/0x80\n",
            208253,
            True,
        ),
        (
            "Oct 02 14:21:07 node kernel: python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), "
            "order=0, oom_score_adj=0\n",
            None,
            False,
        ),
        (
            "[137771.992800] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=abc,mems_allowed=0-1,"
            "oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/c1,task=python,pid=4410,uid=0\n",
            4410,
            True,
        ),
        (
            "[  101.1]  dump_stack+0x63/0x88\n[  101.2]  dump_header+0x78/0x294\n[  101.3]  oom_kill_process.cold+0x8/0x8a\n"
            "[  101.4]  out_of_memory+0x114/0x4a0\n",
            None,
            False,
        ),
    ],
)
def test_every_part_of_the_oom_killers_report_is_a_host_oom(log: str, pid: Any, cgroup: bool) -> None:
    root = _root(log)
    assert root.code == "RUN121" and root.facts["killer"] == "kernel_oom_killer"
    assert root.facts.get("pid") == pid and bool(root.facts.get("cgroup")) is cgroup


def test_the_killed_process_line_is_the_finding_when_it_is_there() -> None:
    log = (
        "[1880957.563150] perl invoked oom-killer: gfp_mask=0x280da, order=0, oom_score_adj=0\n"
        "[1880957.563400] Out of memory: Kill process 18694 (perl) score 246 or sacrifice child\n"
        "[1880957.563408] Killed process 18694 (perl) total-vm:1972392kB, anon-rss:1953348kB, file-rss:0kB\n"
    )
    findings = diagnose_sources([("dmesg", log)])
    assert [f.code for f in findings] == ["RUN121"] and findings[0].facts["pid"] == 18694


@pytest.mark.parametrize(
    "log",
    [
        "(raylet) [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: 10 Workers (tasks / actors) killed due "
        "to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: e5d9, IP: 10.0.62.231) over the last "
        "time period.\n",
        "node_manager.cc:3040: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to "
        "other reasons at node (ID: 2c82, IP: 172.31.183.172) over the last time period.\n",
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node (IP: "
        "10.0.0.1, ID: ab12) where the task (task ID: ff, name=train) was running was 29.30GB / 30.84GB (0.950027), which "
        "exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 12) because it was the most recently "
        "scheduled task.\n",
    ],
)
def test_rays_memory_monitor_in_its_shapes_is_a_host_oom(log: str) -> None:
    root = _root(log)
    assert root.category == "host_oom" and root.facts["killer"] == "ray_memory_monitor"


# -- GPU memory exhaustion reported by another layer ----------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "nbytes"),
    [
        ("node-1:1234:1290 [3] include/alloc.h:48 NCCL WARN Failed to CUDA calloc 6291456 bytes\n", 6291456),
        (
            "[2025-01-01 10:00:00] node-1:1234:1290 [3] NCCL WARN Failed to CUDA calloc async 2432 bytes\n",
            2432,
        ),
        (
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
            "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nFailed to CUDA calloc 536870912 bytes\n",
            536870912,
        ),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED\n", None),
        ("RuntimeError: CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY\n", None),
    ],
)
def test_gpu_memory_exhaustion_reported_by_another_layer_is_cuda_oom(log: str, nbytes: Any) -> None:
    root = _root(log)
    assert root.category == "cuda_oom", root.message
    assert root.facts.get("requested_bytes") == nbytes


# -- gloo and NCCL-plugin transports failing at connect: network -----------------------------------------------


@pytest.mark.parametrize(
    "why",
    [
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] Connection refused, "
        "remote=[127.0.1.1]:17308",
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:799] Connect timeout [none]",
    ],
)
@pytest.mark.parametrize(
    "prefix", ["[rank4]:[E421 02:05:38.764490322 ProcessGroupGloo.cpp:143] ", "[E ProcessGroupGloo.cpp:138] "]
)
def test_gloo_connect_full_mesh_failure_is_network(prefix: str, why: str) -> None:
    # logAndThrow: the message is logged, then raised as the RuntimeError
    root = _root(
        f"{prefix}Gloo connectFullMesh failed with {why}\n"
        f"RuntimeError: Gloo connectFullMesh failed with {why}\n"
    )
    assert root.category == "nccl_network" and root.facts["phase"] == "connect_full_mesh"
    assert (root.facts.get("likely_cause") == "host_name_resolves_to_loopback") is ("127.0.1.1" in why)


@pytest.mark.parametrize(
    "msg",
    [
        "NET/OFI Couldn't open CQ. RC: -22, ERROR: Invalid argument",
        "NET/OFI OFI fi_getinfo() call failed: No data available",
        "NET/OFI Unable to find a protocol that worked",
    ],
)
def test_ofi_plugin_failures_are_network_not_usage(msg: str) -> None:
    root = _root(f"ip-10-0-0-1:1234:1300 [0] NCCL WARN {msg}\n")
    assert root.category == "nccl_network"


# -- rendezvous of every era ---------------------------------------------------------------------------------------


def test_a_store_operation_reset_during_the_store_based_barrier_is_rendezvous() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 3145, in '
        "_store_based_barrier\n    store.add(store_key, 1)\nRuntimeError: Connection reset by peer\n"
    )
    assert _root(log).category == "rendezvous"


def test_a_gloo_peer_reset_outside_the_store_stays_network() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 1206, in '
        "all_reduce\n    work = group.allreduce([tensor], opts)\n"
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:5678\n"
    )
    assert _root(log).category == "nccl_network"


def test_the_agents_exit_barrier_timeout_is_a_consequence() -> None:
    log = (
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (FAILED). Waiting 300 seconds "
        "for other agents to finish\n"
        "ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 300.05 seconds\n"
        "torch.distributed.DistStoreError: Timed out after 301 seconds waiting for clients. 1/2 clients joined.\n"
        "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
        "[10.0.0.2]:5678\n"
    )
    findings = diagnose_sources([("job.log", log)])
    barrier = next(f for f in findings if f.code == "RUN221")
    assert barrier.facts["exit_barrier"] is True and findings[0].code != "RUN221"


@pytest.mark.parametrize(
    "line",
    [
        "socket.gaierror: [Errno -2] Name or service not known",
        "[W socket.cpp:663] [c10d] The IPv6 network addresses of (node-1, 29500) cannot be "
        "retrieved (gai error: -2 - Name or service not known).",
    ],
)
def test_the_store_host_name_that_does_not_resolve(line: str) -> None:
    log = (
        '  File "/x/torch/distributed/rendezvous.py", line 176, in _create_c10d_store\n    return TCPStore(\n'
        + line
        + "\n"
    )
    root = _root(log)
    assert root.code == "RUN222" and root.facts["error"] == "name resolution"


def test_a_per_address_einval_warning_of_socket_cpp_stays_silent() -> None:
    line = (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [ip-26-0-146-37]:22456 (errno: 22 - "
        "Invalid argument).\n"
    )
    assert _root(line * 5) is None


# -- environment and platform --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "RuntimeError: CUDA error: peer access is not supported between these two devices\n",
        "node-1:1234:1290 [1] NCCL WARN Cuda failure 'peer access is not supported between these two devices'\n",
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details), NCCL version 2.19.3\nncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\nCuda failure 'peer access is not supported between these two devices'\n",
        "RuntimeError: CUDA driver error: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED\n",
    ],
)
def test_peer_access_unsupported_in_every_layer(log: str) -> None:
    root = _root(log)
    assert root.code == "RUN291" and root.facts["cuda_error_number"] == 217


@pytest.mark.parametrize(
    "msg",
    [
        "CUDA error: all CUDA-capable devices are busy or unavailable",
        "CUDA error: CUDA-capable device(s) is/are busy or unavailable",
        "CUDA error: system not yet initialized",
    ],
)
def test_busy_devices_and_fabric_manager_not_ready_are_the_environment(msg: str) -> None:
    assert _root(f"RuntimeError: {msg}\n").category == "driver_env"


def test_the_nccl_backend_without_a_visible_gpu() -> None:
    root = _root("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n")
    assert root.category == "driver_env"


def test_accelerates_batch_size_search_that_gave_up_is_cuda_oom() -> None:
    log = (
        '  File "/x/accelerate/utils/memory.py", line 142, in decorator\n'
        '    raise RuntimeError("No executable batch size found, reached zero.")\n'
        "RuntimeError: No executable batch size found, reached zero.\n"
    )
    assert _root(log).category == "cuda_oom"


# -- desync: the fingerprints in every printed shape -----------------------------------------------------------


@pytest.mark.parametrize(
    "fp0,fp1",
    [
        (
            "CollectiveFingerPrint(SequenceNumber=1649OpType=BARRIER)",
            "CollectiveFingerPrint(SequenceNumber=0OpType=GATHER)",
        ),
        (
            "CollectiveFingerPrint(SequenceNumber=1649, OpType=BARRIER, TensorShape=[1], TensorDtypes=Float, "
            "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda:0))",
            "CollectiveFingerPrint(SequenceNumber=0, OpType=GATHER, TensorShape=[1], TensorDtypes=Float, "
            "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda:1))",
        ),
    ],
)
def test_detail_fingerprints_with_and_without_separators(fp0: str, fp1: str) -> None:
    log = (
        f"RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: {fp0}, but "
        f"Rank 1 is running collective: {fp1}.Collectives differ in the following aspects: \t Sequence number: "
        "1649vs 0  Op type: BARRIERvs GATHER\n"
    )
    root = _root(log)
    assert root.code == "RUN201"
    fps = root.facts["fingerprints"]
    assert (fps["0"]["op"], fps["0"]["seq"], fps["1"]["op"], fps["1"]["seq"]) == (
        "BARRIER",
        1649,
        "GATHER",
        0,
    )
    assert root.facts["differ"]["Op type"] == ["BARRIER", "GATHER"]


# -- stack-only pastes: a traceback cut before its exception line -------------------------------------------------


def test_a_traceback_cut_before_its_exception_line_is_an_info_note_naming_its_last_frame() -> None:
    log = (
        "step 10 loss 1.2\nTraceback (most recent call last):\n"
        '  File "/workspace/train.py", line 211, in <module>\n    main()\n'
        '  File "/workspace/train.py", line 180, in main\n    loss = model(batch)\n'
    )
    findings = diagnose_sources([("job.log", log)])
    assert [(f.code, f.severity.value) for f in findings] == [("RUN134", "info")]
    assert findings[0].facts["frame"] == "/workspace/train.py:180 in main"


def test_a_whole_traceback_is_not_called_cut() -> None:
    log = (
        'Traceback (most recent call last):\n  File "/workspace/train.py", line 211, in <module>\n    main()\n'
        "ValueError: bad config\n"
    )
    assert all(
        f.facts.get("exception") != "traceback cut before its exception line"
        for f in diagnose_sources([("job.log", log)])
    )


# -- transports reporting a size mismatch between ranks: a desync, not the network ----------------------------


@pytest.mark.parametrize(
    ("warn", "got", "want"),
    [
        (
            "transport/net_socket.cc:200 NCCL WARN NET/Socket : message truncated : receiving 696320 bytes instead of 32768",
            696320,
            32768,
        ),
        (
            "transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, "
            "local size 496640 remote size 65536",
            65536,
            496640,
        ),
    ],
)
def test_transports_reporting_truncated_or_mismatched_sizes_are_a_desync(
    warn: str, got: int, want: int
) -> None:
    root = _root(f"node-1:2918:3333 [0] {warn}\n")
    assert root.code == "RUN201" and (root.facts["bytes"], root.facts["expected_bytes"]) == (got, want)


# -- NCCL's and c10d's argument and configuration checks --------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "E       ValueError: Tensors must be contiguous",
        "RuntimeError: Tensors must be CUDA and dense",
        "RuntimeError: Only CUDA dense tensor is supported for NCCL collective operations",
    ],
)
def test_c10d_tensor_checks_are_nccl_usage(line: str) -> None:
    assert _root(line + "\n").code == "RUN191"


def test_no_algorithm_or_protocol_available_is_usage() -> None:
    root = _root("201: :41367:41367 [1] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available\n")
    assert root.code == "RUN191" and root.facts["likely_cause"] == "nccl_algo_or_proto_setting"


@pytest.mark.parametrize(
    "log",
    [
        "dsw-1:71868:71868 [0] init.cc:1270 NCCL WARN Invalid config blocking attribute value -2147483648\n",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid "
        "argument, NCCL version 2.14.3\nncclInvalidArgument: Invalid value for an argument.\nLast error:\n"
        "Invalid config blocking attribute value -2147483648\n",
    ],
)
def test_a_config_struct_from_another_nccl_version_is_a_version_mismatch(log: str) -> None:
    # NCCL's class (ncclInvalidArgument), as the reference corpora label it: LABEL_DECISIONS in test_corpus.py
    root = _root(log)
    assert (
        root.code == "RUN197"
        and root.category == "nccl_usage"
        and root.facts["config_attribute"] == "blocking"
    )


def test_a_small_config_value_is_the_callers_own_usage_not_another_version() -> None:
    root = _root("node-a:41234:41234 [0] init.cc:1270 NCCL WARN Invalid config blocking attribute value 2\n")
    assert root.code != "RUN197"


@pytest.mark.parametrize(
    "log",
    [
        "ncclCommInitRank failed: unhandled system error at /usr/lib/python3/dist-packages/x.cc:120\n"
        "tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: unhandled system error\n",
        "fail to new train...e= NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhanled system error\n",
    ],
)
def test_nccls_system_error_in_other_wrappers_and_spellings(log: str) -> None:
    assert _root(log).category == "nccl_network"


def test_an_unhandled_cuda_error_explained_by_the_driver_line_below_it() -> None:
    log = (
        "Failed, NCCL error /lmdeploy/src/turbomind/utils/nccl_utils.cc:296 'unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details)\ndetail: CUDA driver version is insufficient for CUDA runtime version\n"
    )
    assert _root(log).code == "RUN261"


def test_an_nccl_internal_error_whose_warns_say_out_of_memory_is_cuda_oom() -> None:
    log = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1296, "
        "internal error - please report this issue to the NCCL developers, NCCL version 2.18.1\n"
        "node:2134736:2285781 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
        "node:2134736:2285781 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n"
    )
    assert _root(log).category == "cuda_oom"


# -- platform features and GPUs the driver cannot bring up -----------------------------------------------------


@pytest.mark.parametrize(
    ("warn", "feature"),
    [
        (
            "misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported",
            "dmabuf",
        ),
        (
            "transport/nvls.cc:120 NCCL WARN NVLS multicast support is not available on dev 0 (Fabric Manager)",
            "nvls",
        ),
    ],
)
def test_platform_features_nccl_could_not_use(warn: str, feature: str) -> None:
    root = _root(f"node-3:4121:4188 [0] {warn}\n")
    assert root.code == "RUN292" and root.facts["feature"] == feature


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # A bare 'invalid argument' is NCCL's ncclUnhandledCudaError: nccl_usage as the reference corpora label
        # it (tests/diagnose/test_corpus.py, LABEL_DECISIONS), in 2.18's and 2.2x's line numbers and without one.
        ("transport/nvls.cc:254 NCCL WARN Cuda failure 1 'invalid argument'", "RUN196"),
        ("transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'", "RUN196"),
        ("transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'", "RUN196"),
        # The driver's answers that name the fabric or its state stay the platform's refusal.
        (
            "transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'",
            "RUN292",
        ),
        ("transport/nvls.cc:223 NCCL WARN Cuda failure 801 'operation not supported'", "RUN292"),
    ],
)
def test_a_cuda_failure_at_nvls_is_ncclss_class_unless_it_names_the_fabric(line: str, code: str) -> None:
    assert _root(f"devgpu263:589012:591652 [0] {line}\n").code == code


@pytest.mark.parametrize(
    ("line", "minor"),
    [
        (
            "[   38.773115] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)\n"
            "[   38.773764] NVRM: rm_init_adapter failed for device bearing minor number 0\n",
            0,
        ),
        (
            "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] "
            "(0x00000062) returned from pRmApi->AllocWithHandle\n",
            None,
        ),
    ],
)
def test_a_gpu_the_driver_cannot_initialise(line: str, minor: Any) -> None:
    root = _root(line)
    assert root.code == "RUN293" and root.facts.get("minor_number") == minor


# -- crashes as UCX's signal handler prints them -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        (
            "[gpu-node09:332629:0:332629] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)",
            "SIGSEGV",
        ),
        ("[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)", "SIGBUS"),
    ],
)
def test_ucx_signal_handler_records(line: str, signal: str) -> None:
    root = _root(
        line + "\n==== backtrace (tid:   5704) ====\n 0 0x0000000000043090 killpg()  ???:0\n"
        " 1 0x000000000008170d ncclGroupEnd()  ???:0\n"
    )
    assert root.code == "RUN131" and root.facts["signal"] == signal and root.facts["frame"] == "ncclGroupEnd"


# -- rendezvous: more shapes ---------------------------------------------------------------------------------------


def test_a_collective_before_init_process_group() -> None:
    root = _root(
        "RuntimeError: Default process group has not been initialized, please make sure to call "
        "init_process_group.\n"
    )
    assert root.code == "RUN224"


def test_the_store_barrier_timeout_in_lower_case_and_the_sequence_number_store_op() -> None:
    assert (
        _root("RuntimeError: timed out initializing process group in store based barrier on rank: 0\n").code
        == "RUN221"
    )
    log = (
        '  File "/x/torch/distributed/distributed_c10d.py", line 611, in init_process_group\n'
        "    default_pg._set_sequence_number_for_group()\nRuntimeError: Connection reset by peer\n"
    )
    assert _root(log).category == "rendezvous"


def test_an_ipv6_lookup_warning_for_localhost_stays_silent_and_one_for_another_host_does_not() -> None:
    warn = (
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of ({}, 51595) cannot be retrieved (gai error: -2 - "
        "Name or service not known).\n"
    )
    assert _root(warn.format("localhost") * 3) is None
    # one "no IPv6 record" lookup for another host is socket.cpp's step before IPv4 (macOS ".local" names,
    # IPv4 literals); the resolver failing (EAI_AGAIN, -3) or the lookup repeated is the failure
    assert _root(warn.format("user")) is None
    assert _root(warn.format("user") * 3).code == "RUN222"
    assert (
        _root(
            warn.format("user").replace(
                "-2 - Name or service not known", "-3 - Temporary failure in name resolution"
            )
        ).code
        == "RUN222"
    )


# -- GPU memory exhaustion in vLLM's words ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "ValueError: Free memory on device cuda:0 (109.53/121.69 GiB) on startup is\nless than desired GPU memory "
        "utilization (0.91, 110.74 GiB)\n",
        "(ActorModelRayActor pid=348952) RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n",
    ],
)
def test_vllm_memory_failures_are_cuda_oom(log: str) -> None:
    assert _root(log).category == "cuda_oom"


# -- more launch and rendezvous shapes ------------------------------------------------------------------------------


def test_two_processes_with_one_rank_at_nccls_bootstrap() -> None:
    root = _root(
        "hpc-25-14:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already "
        "checked in\n"
    )
    assert root.code == "RUN224" and root.facts["duplicate_rank"] == 1 and root.facts["nranks"] == 8


def test_a_closed_elastic_rendezvous_that_ends_the_agent_is_rendezvous() -> None:
    log = (
        '  File "/x/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 635, in run\n'
        "    raise RendezvousClosedError()\ntorch.distributed.elastic.rendezvous.api.RendezvousClosedError\n"
        "srun: error: cdr2596: task 1: Exited with exit code 1\n"
    )
    assert _root(log).category == "rendezvous"


def test_nccl_ras_report_of_different_operation_counts_names_the_odd_ranks() -> None:
    log = (
        "#0-0 (fa93daea854b060b) MISMATCH\n  Communicator ranks have different AllGather operation counts\n"
        "  30 ranks have launched up to operation 640\n  2 ranks have launched up to operation 641\n"
        "  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124\n"
        "  Rank 13 -- GPU 5 managed by process 323033 on node 10.137.190.124\n"
    )
    root = _root(log)
    assert (
        root.code == "RUN201" and root.facts["suspect_ranks"] == [12, 13] and root.facts["op"] == "AllGather"
    )


def test_rays_dead_worker_after_a_watchdog_timeout_is_its_echo() -> None:
    log = (
        "(WorkerDict pid=97397, ip=33.97.231.144) [rank3]:[E1023 02:44:30.94 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=26, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=1200000) ran for 1200007 milliseconds before timing out.\n"
        "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
        "the problem, check the logs for the dead worker. Worker IP address: 33.97.254.40\n"
    )
    assert _root(log).code == "RUN151"


def test_framework_cuda_code_reporting_out_of_memory() -> None:
    log = (
        "terminate called after throwing an instance of 'caffe2::EnforceNotMet'\n  what():  [enforce fail at "
        "context_gpu.cu:343] error == cudaSuccess. 2 vs 0. Error at: /caffe2/core/context_gpu.cu:343: out of memory "
        "Error from operator:\n"
    )
    assert _root(log).category == "cuda_oom"


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("Cuda failure 217 'peer access is not supported between these two devices'", "RUN291"),
        (
            "node05-ccn:44741:44741 [0] Test CUDA failure common.cu:1045 'CUDA driver version is insufficient for CUDA runtime "
            "version'",
            "RUN261",
        ),
        (" Test CUDA failure common.cu:1007\n'CUDA-capable device(s) is/are busy or unavailable'", "RUN262"),
    ],
)
def test_bare_cuda_failure_records_of_nccl_and_nccl_tests(line: str, code: str) -> None:
    assert _root(line + "\n").code == code


def test_a_busy_device_with_the_drivers_reset_record_is_the_gpu() -> None:
    log = (
        "Test CUDA failure common.cu:1007 'CUDA-capable device(s) is/are busy or unavailable'\n"
        "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
        "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from pRmApi->AllocWithHandle\n"
    )
    assert _root(log).code == "RUN293"
    assert (
        _root("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n").code == "RUN262"
    )


# -- exit records and wrapped exceptions in their other containers -----------------------------------------------


def test_an_elastic_json_error_file_with_an_escaped_py_callstack() -> None:
    import json

    tb = (
        'Traceback (most recent call last):\n  File "/x/torch/distributed/elastic/multiprocessing/errors/__init__.py", '
        'line 346, in wrapper\n    return f(*args, **kwargs)\n  File "train.py", line 10, in main\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
        "of which 1.21 GiB is free."
    )
    error_file = {
        "message": {
            "message": "OutOfMemoryError: CUDA out of memory.",
            "extraInfo": {"py_callstack": tb, "timestamp": "1700000000"},
        }
    }
    root = _root(json.dumps(error_file, indent=2) + "\n")
    assert root.category == "cuda_oom" and root.facts["gpu_index"] == 0


def test_a_childfailederror_header_glued_to_its_rule() -> None:
    log = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:=====================================\n"
        "train.py FAILED\n-------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
        "-------------------------------------\nRoot Cause (first observed failure):\n[0]:\n"
        "  time      : 2024-01-01_12:00:00\n  host      : node-2\n  rank      : 5 (local_rank: 1)\n"
        "  exitcode  : -9 (pid: 777)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 777\n"
    )
    root = _root(log)
    assert root.code == "RUN121" and (root.facts["rank"], root.facts["pid"], root.facts["host"]) == (
        5,
        777,
        "node-2",
    )


def test_a_cuda_oom_inside_rays_task_error() -> None:
    log = (
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::TrainWorker.train() (pid=1234, ip=10.0.0.1)\n"
        '  File "/x/train.py", line 40, in train\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 "
        "GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has 78.60 GiB memory in use.\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and root.facts["gpu_index"] == 3
