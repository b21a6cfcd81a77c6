"""Ascend NPU (HCCL / CANN / torch_npu / MindSpore / vLLM-Ascend) and PaddlePaddle collective failures, by
root cause, under the prefixes and wrappers real logs add. Each group names where its lines come from:

- CANN's error manager records (EI: HCCL, EE: runtime, EH/EI 9999: inner errors whose text follows, EJ:
  HCCP, EL: driver) and torch_npu's raise ("NPU function error: ..., error code is N", "OPS function
  error: HcclAllreduce", "HCCL error in: ...ProcessGroupHCCL.cpp") with its "(PID:.., Device:.., RankID:..)
  ERRxxxxx" record and the runtime's "[Error]: <text of N>" (torch_npu/csrc/core/npu/NPUErrorCodes.h);
- HCCL's plog lines "[ERROR] HCCL(pid,proc):<time> [file.cc:line] ..." (topology exchange, sockets);
- torch_npu's ProcessGroupHCCL watchdog, which copies c10d's texts with WorkHCCL(...);
- MindSpore's "[ERROR] DEVICE(...) ... SyncStream] Call runtime aclrtSynchronizeStreamWithTimeout error."
  with the "Ascend Error Message" frame; vLLM's worker prefix; Ray's actor prefix;
- PaddlePaddle: its gloo copy's "pair.cc:587] TIMEOUT self_rank = 0 pair_rank = 1" under a
  "terminate called ... gloo::TimeoutException" and the "C++ Traceback" / "Error Message Summary"
  frames, and EnforceNotMet wrapping NCCL's "unhandled cuda error".

A RuntimeError or an abort that follows a timeout is its consequence; healthy Ascend logs that print HCCL
init and timeout settings stay silent.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

PREFIXES = [
    "",
    "[rank3]: ",
    "worker-1: ",
    "2025-04-08 18:07:20,444 - ERROR - ",
    "(Worker_DP0_TP5_EP5 pid=818) ERROR 08-13 15:31:21 [multiproc_executor.py:945] ",
    "(train pid=8464) ",
]


def _prefixed(prefix: str, log: str) -> str:
    return "".join(prefix + ln + "\n" for ln in log.strip("\n").split("\n"))


# Device-side waits of HCCL operations that ran out: (log, facts the root must carry).
TIMEOUTS: list[tuple[str, dict[str, Any]]] = [
    # EI0002 alone (torch_npu docs' HCCL_timeout.md shape, without the cluster summary)
    (
        "EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [unknown].base information: [streamID:[2282987520], taskID[5], tag[AllReduce_90.90.92.240%enp189s0f0_60000_0_1732766162316022], AlgType(level 0-1-2):[fullmesh-ring-ring].] task information: [",
        {"phase": "notify_wait", "op": "AllReduce", "error_code": "EI0002"},
    ),
    # EI0002 naming the remote rank: that rank is the suspect
    (
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [5].base information: [streamID:[1], taskID[39], taskType[Notify Wait], tag[Broadcast_192.168.0.116%enp69s0_60000_0_1694500287022627].] task information: [notify id:[0x0000000500000010], stage:[0], remote rank:[5].]",
        {"suspect_ranks": [5], "op": "Broadcast"},
    ),
    # remote rank 4294967295 (unknown to HCCL): no suspect
    (
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [4294967295].base information: [streamID:[1], taskID[39], taskType[Notify Wait], tag[AllReduce_192.168.0.116%enp69s0_60000_0_1694500287022627].]",
        {"phase": "notify_wait"},
    ),
    # torch_npu's raise, its record and the runtime's text above the CANN record
    (
        """RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048
[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:8) ERR00100 PTA call acl api failed
[Error]: The execution of the internal task times out.
        Rectify the fault based on the error information in the ascend log.
EI0002: [PID: 13075] 2025-06-25-10:45:23.586.187 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [unknown]. base information: [streamID:[1], taskID[8318285], tag[AllReduce_group_name_710], AlgType(level 0-1-2):[fullmesh-ring-ring].]""",
        {"phase": "notify_wait", "device": 0, "npu_error": 507048},
    ),
    # the raise and the runtime's text with the CANN record cut from the paste
    (
        """RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048
[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:8) ERR00100 PTA call acl api failed
[Error]: The execution of the internal task times out.
        Rectify the fault based on the error information in the ascend log.""",
        {"phase": "stream_wait", "npu_error": 507048, "device": 0},
    ),
    # 507046 and EE1002 (aclrtSynchronizeDevice)
    (
        """RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:390 NPU function error: aclrtSynchronizeDevice, error code is 507046
[ERROR] 2024-09-26-16:06:40 (PID:2671581, Device:2, RankID:2) ERR00100 PTA call acl api failed
[Error]: In the specified timeout waiting event, all tasks in the specified stream are not completed.
        Rectify the fault based on the error information in the ascend log.
EE1002: 2024-09-26-16:06:40.565.510 Stream synchronize timeout. rtDeviceSynchronize execute failed, reason=[stream sync timeout]
        Possible Cause: 1. The timeout interval may be improperly set.""",
        {"phase": "stream_wait", "npu_error": 507046, "device": 2},
    ),
    # the warning form of the same numbers (NPUStream.cpp's synchronize of used devices)
    (
        """[W NPUStream.cpp:409] Warning: NPU warning, error code is 507046[Error]:
[Error]: In the specified timeout waiting event, all tasks in the specified stream are not completed.""",
        {"phase": "stream_wait", "npu_error": 507046},
    ),
    # event wait timeouts of the device (EE9999 inner error, vLLM-Ascend's event synchronize)
    (
        """RuntimeError: synchronize:../torch_npu/csrc/core/npu/NPUEvent.cpp:212 NPU function error: aclrtSynchronizeEvent(event_), error code is 107020
[ERROR] 2026-08-13-15:31:21 (PID:818, Device:5, RankID:-1) ERR00100 PTA call acl api failed.
EE9999: Inner Error!
EE9999[PID: 818] 2026-08-13-15:31:21.888.208 (EE9999):  The error from device(chipId:5, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:44, sq_id:5, task_id:61293, event_id=55, timeout=234s.[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1593]""",
        {"phase": "stream_wait", "device": 5, "timeout_s": 234},
    ),
    # MindSpore's SyncStream record and the forum's escaped frame
    (
        r"""[ERROR] DEVICE(192563,ffff90722010,python):2025-03-18-20:50:24.716.326 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_stream_manager.cc:241] SyncStream] Call runtime aclrtSynchronizeStreamWithTimeout error.
\----------------------------------------------------
\- Ascend Error Message:
\----------------------------------------------------
EE9999: Inner Error!
EE9999 The error from device(chipId:3, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:122, sq_id:122, task_id:790, event_id=73, timeout=1980.[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1314]""",
        {"device": 3, "timeout_s": 1980},
    ),
    # the device's HCCL task timeout (fftsplus) under an "ACL stream synchronize failed." raise
    (
        """RuntimeError: ACL stream synchronize failed.
EI9999: Inner Error!
EI9999: 2024-10-21-10:42:00.358.410  The error from device(chipId:3, dieId:0), serial number is 9, hccl fftsplus task timeout occurred during task execution, stream_id:5, sq_id:5, task_id:38827, stuck notify num:1, timeout:30min(default).[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1435]""",
        {"phase": "notify_wait", "device": 3},
    ),
    # EH9999 runtime result 107020 with "reason=[task timeout]"
    (
        """EH9999: 2024-07-03-11:28:40.450.757  wait for compute device to finish failed, runtime result = 107020.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]
        TraceBack (most recent call last):
 (function npuSynchronizeDevice)
EH9999: Inner Error!
        rtDeviceSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]""",
        {"phase": "stream_wait", "npu_error": 107020},
    ),
    # EI0006 under torch_npu's OPS raise of HcclAllreduce (the raise is not a crash of its own)
    (
        """RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 6
[ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.
EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck""",
        {"phase": "link_setup", "error_code": "EI0006", "device": 1},
    ),
    # the error manager's name for EI0006, alone
    ("Communication_Error_Get_Socket(EI0006)", {"phase": "link_setup"}),
    # HCCL's plog for the same link set-up timeout
    (
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2734049][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]",
        {"phase": "link_setup", "timeout_s": 120},
    ),
    # the cluster summary names the device whose heartbeat was lost
    (
        """EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [unknown].base information: [streamID:[2282987520], taskID[5], tag[AllReduce_90.90.92.240%enp189s0f0_60000_0_1732766162316022], AlgType(level 0-1-2):[fullmesh-ring-ring].] task information: [
there are(is) 1 abnormal device(s):
Cluster Exception Location[IP/ID]:[90.90.92.240/1], Arrival Time:[Thu Nov 28 11:56:34 2024], Discoverer:[90.90.92.240/0], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected
]""",
        {"suspect_device": "90.90.92.240/1", "op": "AllReduce"},
    ),
    # MindSpore / older CANN wordings (MindSpore troubleshooter's HCCL knowledge base)
    (
        "[ERROR] HCCL(21722,python):2022-09-14-10:11:06.384.781 [notify.cc:128][21913][Notify][Wait]Notify wait execute failed, device[3]",
        {"phase": "notify_wait"},
    ),
    (
        "[ERROR] HCCL(21722,python):2022-09-14-10:21:06.384.781 [transport_p2p.cc:237][21913][Wait]connected p2p timeout, timeout:600 s. local logicDevid:3, remote physic id:0",
        {"phase": "link_setup"},
    ),
    # an EI0002 record whose first line the paste cut: its group information and the catalogue's cause
    (
        """]. group information: [group:[172.16.38.219%eth0_60000_0_1742963775856197], user define information[], rankSize[8], rankId[4].]
        Possible Cause: 1. An exception occurs during the execution on some NPUs in the cluster. As a result, collective communication operation failed.2. The execution speed on some NPU in the cluster is too slow to complete a communication operation within the timeout interval. (default 1800s, You can set the interval by using HCCL_EXEC_TIMEOUT.)3. The number of training samples of each NPU is inconsistent.4. Packet loss or other connectivity problems occur on the communication link.""",
        {"phase": "notify_wait", "group_rank": 4},
    ),
    # the summary alone
    (
        "Cluster Exception Location[IP/ID]:[10.1.2.3/7], Arrival Time:[Mon Mar  3 10:00:00 2025], Discoverer:[10.1.2.4/0], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected",
        {"suspect_device": "10.1.2.3/7", "phase": "heartbeat_lost"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log,facts", TIMEOUTS)
def test_hccl_timeouts_are_collective_timeouts(prefix: str, log: str, facts: dict[str, Any]) -> None:
    check_root(_prefixed(prefix, log), "RUN311", {"backend": "hccl", **facts})


def test_rank_comes_from_the_prefix_or_torch_npu_record() -> None:
    log = TIMEOUTS[3][0]
    assert (root_finding(log) or pytest.fail("no root")).facts["rank"] == 8  # RankID:8 of the record
    check_root(_prefixed("[rank3]: ", TIMEOUTS[0][0]), "RUN311", {"rank": 3})


def test_the_raise_and_its_record_are_one_finding() -> None:
    found = failure_findings(TIMEOUTS[3][0])
    assert [f.code for f in found] == ["RUN311"], found


# torch_npu's ProcessGroupHCCL watchdog copies c10d's records with WorkHCCL: the watchdog's rows read them.
WATCHDOG = [
    # torch_npu 2.5's record without NumelIn/NumelOut (vllm-ascend #382)
    "[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.",
    "[rank1]:[E ProcessGroupHCCL.cpp:1011] [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=1800000) ran for 1800442 milliseconds before timing out.",
    "[E compiler_depend.ts:907] [Rank 0] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.",
    "RuntimeError: [Rank 0] Work WorkHCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) timed out in blocking wait (TORCH_HCCL_BLOCKING_WAIT=1 or HCCL_BLOCKING_WAIT=1).",
]


@pytest.mark.parametrize("line", WATCHDOG)
def test_torch_npu_watchdog_records(line: str) -> None:
    check_root(line, "RUN151", {"seq": 12, "op": "ALLREDUCE", "backend": "hccl"})


def test_torch_npu_watchdog_teardown_is_the_timeouts_consequence() -> None:
    log = (
        WATCHDOG[0]
        + "\n[rank1]:[E ProcessGroupHCCL.cpp:991] [Rank 1] Some HCCL operations have failed or timed out. Due to "
        "the asynchronous nature of ASCEND kernels, subsequent NPU operations might run on corrupted/incomplete "
        "data.\n[rank1]:[E ProcessGroupHCCL.cpp:995] [Rank 1] To avoid data inconsistency, we are taking the "
        "entire process down.\n"
    )
    found = failure_findings(log)
    assert found[0].code == "RUN151" and len([f for f in found if f.code == "RUN151"]) >= 1


# A crash that follows a timeout is its consequence: the launcher's SIGABRT record, a bare RuntimeError.
TORCHRUN_ABORT = """[2025-03-02 08:44:12,001] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6) local_rank: 2 (pid: 40211) of binary: /usr/bin/python3
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-03-02_08:44:12
  host      : npu-node-3
  rank      : 2 (local_rank: 2)
  exitcode  : -6 (pid: 40211)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 40211
============================================================"""


def test_sigabrt_after_an_hccl_timeout_is_its_consequence() -> None:
    log = _prefixed("[rank2]: ", TIMEOUTS[3][0]) + TORCHRUN_ABORT
    check_root(log, "RUN311", {"rank": 2})


def test_a_peers_oom_outranks_the_timeout_it_causes() -> None:
    log = (
        _prefixed("[rank0]: ", TIMEOUTS[1][0])
        + "[rank5]: RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 5; 60.97 GiB total capacity; "
        "57.10 GiB already allocated; 57.10 GiB current active; 1.20 GiB free; 58.50 GiB reserved in total by "
        "PyTorch)\n"
    )
    root = root_finding(log)
    assert root is not None and root.category == "cuda_oom", root


# Start-up: the communicator's root-info / topology exchange did not gather every rank (rendezvous).
RENDEZVOUS: list[tuple[str, dict[str, Any]]] = [
    (
        """[ERROR] HCCL(1041081,all_reduce_test):2000-03-15-01:20:01.624.966 [topoinfo_exchange_server.cc:314] [1041362][InitGroupStage][RanktableDetect]topo exchange server get socket timeout! timeout[120 s]
[ERROR] HCCL(1041081,all_reduce_test):2000-03-15-01:20:01.625.103 [topoinfo_exchange_server.cc:501] [1041362][InitGroupStage][DisplayConnectionedRank]total connected num is [4],line num is [1]
[ERROR] HCCL(1041081,all_reduce_test):2000-03-15-01:20:01.625.112 [topoinfo_exchange_server.cc:503] [1041362][InitGroupStage][DisplayConnectionedRank]need connect rankNum is [8]""",
        {"connected_ranks": 4, "expected_ranks": 8},
    ),
    (
        """[ERROR] HCCL(1041085,all_reduce_test):2000-03-15-01:20:01.630.122 [topoinfo_exchange_base.cc:145] [1041085][InitGroupStage][RanktableDetect] TopoDetect ERROR occur !!! fault_type[1], fault_info["Failed to connect agent[1,3,5,7,]"]""",
        {"problem": "hccl_rootinfo"},
    ),
    (
        "[ERROR] HCCL(1041085,all_reduce_test):2000-03-15-01:20:01.630.557 [topoinfo_exchange_agent.cc:552] [1041085][InitGroupStage][RanktableDetect]rank num[8]is different with rank list size[4] in total topo rank info.",
        {"expected_ranks": 8, "connected_ranks": 4},
    ),
    (
        "[ERROR] HCCL(35219,python):2022-10-09-15:02:13.210.311 [hcom.cc:240][35219][Init][Result]errNo[0x0000000005000001] rankTablePath[/home/rank_table_8pcs.json] EI0004: The ranktable is invalid,Reason:[The ranktable config is invalid. device id[9] is out of range]",
        {"problem": "hccl_rank_table"},
    ),
    # MindSpore's FAQ: HCCL's initialisation refused the rank table
    ("RuntimeError: Init plugin so failed, ret = 1343225860", {"problem": "hccl_rank_table"}),
    (
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 9",
        {"backend": "hccl"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES[:4])
@pytest.mark.parametrize("log,facts", RENDEZVOUS)
def test_hccl_start_up_failures_are_rendezvous(prefix: str, log: str, facts: dict[str, Any]) -> None:
    code = "RUN224" if facts.get("problem") == "hccl_rank_table" else "RUN221"
    check_root(_prefixed(prefix, log), code, facts)


# Other roots of the family: network, a taken port, the device, a busy NPU.
OTHERS: list[tuple[str, str, dict[str, Any]]] = [
    (
        """[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. Reason: [Create][DestLink]Create Dest error! createLink para:rank[1]-localUserrank[1]-localIpAddr[172.16.0.114], dst_rank[0]-remoteUserrank[0]-remote_ip_addr[172.16.0.114]
[rank1]:         Solution: Check other NPUs that are not reporting errors, or check if there are any abnormalities on the other end's NPU.""",
        "RUN172",
        {"peer_rank": 0, "peer_address": "172.16.0.114", "rank": 1},
    ),
    (
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288][HcclSocket][Listen] socket type[1], listen on ip[192.168.20.160] and specific port[16666] fail. Please check the port status and whether the port is been using by other process.\n"
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2734049][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]",
        "RUN223",
        {"port": 16666},
    ),
    (
        """[W430 23:39:01.305254567 NPUStream.cpp:577] Warning: NPU warning, error code is 507010[Error]:
[Error]: The task scheduler loses the heartbeat.
        Rectify the fault based on the error information in the ascend log.
[PID: 1070] 2026-04-30-23:39:01.135.160 Device_Absent/Abnormal(EL0001): Device not found or invalid.
        Device[0] lost heartbeat.[FUNC:SyncTask][FILE:direct_hwts_engine.cc][LINE:407]""",
        "RUN295",
        {"backend": "hccl"},
    ),
    (
        """RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64
[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.
EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.
        Solution: Wait for 10s after killing the last training process and try again.""",
        "RUN262",
        {"device": 3, "reason": "device_busy"},
    ),
]


# torch_npu's raise alone (no CANN record in the excerpt): the HcclResult (hccl_types.h) of the call says
# what it can for the communicator's start-up and for an operation; other numbers stay a bare exception.
RESULTS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 11",
        "RUN222",
        {"hccl_error": 11, "hccl_function": "hcclCommInitRootInfoConfig"},
    ),
    (
        "RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 9",
        "RUN311",
        {"hccl_error": 9, "hccl_function": "HcclAllreduce"},
    ),
    (
        "RuntimeError: InnerRunOpApi:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:281 OPS function error: HcclAllGather, error code is 21",
        "RUN173",
        {"problem": "error_cqe"},
    ),
    (
        "RuntimeError: InnerRunOpApi:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:281 OPS function error: HcclBroadcast, error code is 13",
        "RUN172",
        {"problem": "tcp_transfer"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", RESULTS)
def test_hccl_result_of_a_raise_without_its_record(
    prefix: str, line: str, code: str, facts: dict[str, Any]
) -> None:
    record = (
        "[ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR02200 DIST call hccl api failed."
    )
    check_root(_prefixed(prefix, line + "\n" + record), code, {"device": 1, **facts})


@pytest.mark.parametrize("num", [1, 4, 6, 15])
def test_hccl_results_that_name_no_cause_do_not_invent_one(num: int) -> None:
    line = f"OPS function error: HcclAllGather, error code is {num}"
    assert all(
        f.code not in ("RUN311", "RUN172", "RUN173", "RUN221", "RUN222") for f in failure_findings(line)
    )


@pytest.mark.parametrize("log,code,facts", OTHERS)
def test_other_roots_of_the_family(log: str, code: str, facts: dict[str, Any]) -> None:
    check_root(log, code, facts)


# PaddlePaddle: its gloo copy's pair timeout (under the C++ Traceback frame) and EnforceNotMet over NCCL.
PADDLE_GLOO = """eval model:: 100%|##########| 1061/1061 [40:30<00:00,  2.29s/it]
terminate called after throwing an instance of 'gloo::TimeoutException'
  what():  [/paddle/third_party/gloo/gloo/transport/tcp/pair.cc:587] TIMEOUT self_rank = 0 pair_rank = 1 peer_str = [172.16.32.105]:36265

--------------------------------------
C++ Traceback (most recent call last):
--------------------------------------
0   paddle::distributed::ProcessGroupGloo::GlooTask::Wait(std::chrono::duration<long, std::ratio<1l, 1000l> >)

----------------------
Error Message Summary:
----------------------
FatalError: `Process abort signal` is detected by the operating system.
  [TimeInfo: *** Aborted at 1721351240 (unix time) try "date -d @1721351240" if you are using GNU date ***]
  [SignalInfo: *** SIGABRT (@0x3e800002c3e) received by PID 11326 (TID 0x7f2b5c1ff700) from PID 11326 ***]"""


@pytest.mark.parametrize("prefix", PREFIXES[:4])
def test_paddle_gloo_pair_timeout(prefix: str) -> None:
    check_root(_prefixed(prefix, PADDLE_GLOO), "RUN153", {"peer_rank": 1, "backend": "gloo"})


# Paddle 2.6+'s communication task manager (comm_task_manager.cc, glog WARNING prefix): a collective past the
# process group's timeout, started and not finished, or enqueued and never started.
PADDLE_TASKS: list[tuple[str, dict[str, Any]]] = [
    (
        "W0301 10:30:00.123456 12345 comm_task_manager.cc:146] Find timeout start but not finish task:group_key:group_0,group_ranks:[0, 1, 2, 3],global_rank:2,local_rank:2,comm_count:118,op:allreduce,started:1,completed:0,numel:4096,nranks:4",
        {"rank": 2, "seq": 118, "op": "ALLREDUCE", "started": True, "group_ranks": [0, 1, 2, 3]},
    ),
    (
        "W0301 10:30:00.123456 12345 comm_task_manager.cc:139] Find timeout init but not start task:group_key:group_3,group_ranks:[0, 8],global_rank:8,local_rank:1,comm_count:7,op:broadcast,started:0,completed:0,numel:1,nranks:2",
        {"rank": 8, "seq": 7, "op": "BROADCAST", "started": False},
    ),
]


@pytest.mark.parametrize("prefix", ["", "[2025-03-01 10:30:00] ", "workerlog.2: "])
@pytest.mark.parametrize("log,facts", PADDLE_TASKS)
def test_paddle_comm_task_timeouts(prefix: str, log: str, facts: dict[str, Any]) -> None:
    check_root(prefix + log, "RUN151", {"backend": "paddle", **facts})


# Paddle's TCPStore master (phi/core/distributed/store/tcp_store.cc waitWorkers) giving up on its workers.
PADDLE_STORE = [
    """----------------------
Error Message Summary:
----------------------
FatalError: _timeout:900 elapsed:901 (elapsed > _timeout)=1 (at /paddle/paddle/phi/core/distributed/store/tcp_store.cc:252)""",
    "InvalidArgumentError: TCPStore timeouted and not all workers got ready. (at /paddle/paddle/phi/core/distributed/store/tcp_store.cc:258)",
]


@pytest.mark.parametrize("prefix", PREFIXES[:4])
@pytest.mark.parametrize("log", PADDLE_STORE)
def test_paddle_tcpstore_start_up_timeout_is_rendezvous(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN221", {"backend": "paddle", "store": "tcp_store"})


# Paddle's DataLoader (paddle/fluid/imperative/data_loader.cc) reports its worker's signal like torch's.
def test_paddle_dataloader_worker_killed() -> None:
    log = "SystemError: (Fatal) DataLoader process (pid 10222) exited is killed by signal: Killed. (at /paddle/paddle/fluid/imperative/data_loader.cc:181)"
    root = root_finding(log)
    assert root is not None and root.category == "host_oom", root


PADDLE_NCCL = [
    """terminate called after throwing an instance of 'paddle::platform::EnforceNotMet'
  what():  unhandled cuda error at [/ssd1/xiege/paddle_wheel/Paddle_2.7/Paddle/paddle/fluid/platform/nccl_helper.h:70]
PaddlePaddle Call Stacks:
0       0x7fa2e3830eb0p void paddle::platform::EnforceNotMet::Init<char const*>(char const*, char const*, int) + 352""",
    """----------------------
Error Message Summary:
----------------------
ExternalError: Nccl error, unhandled cuda error (at /paddle/paddle/fluid/platform/collective_helper.cc:76)""",
]


def test_paddle_enforce_over_nccl_unhandled_cuda_error_is_nccl_usage() -> None:
    # mid-training (nccl_helper.h with no communicator set-up on the stack): NCCL's own CUDA failure
    check_root(PADDLE_NCCL[0], "RUN194")


def test_paddle_unhandled_cuda_error_while_creating_the_communicator_is_the_environment() -> None:
    # collective_helper.cc is Paddle's NCCLCommContext::CreateComm: RUN313 (test_nccl_init_cuda_failure.py)
    check_root(PADDLE_NCCL[1], "RUN313")


# Healthy Ascend runs print HCCL's init, its timeouts and torch_npu's watchdog settings: no alarm.
HEALTHY = """[INFO] HCCL(40211,python):2025-03-02-07:40:02.001.112 [op_base.cc:1021][40211][Init][CommRootInfo]hcclCommInitRootInfo success, take time [1850]us, rankNum[8], rank[2]
[W compiler_depend.ts:1160] Warning: The value of HCCL_EVENT_TIMEOUT:1800 is less than or equal to the value of HCCL_EXEC_TIMEOUT:1836. (function operator())
[W compiler_depend.ts:1254] Warning: The watchdog timeout 1800000ms(which is set by init_process_group) is less than or equal to HCCL execution timeout 1836000ms! The plog may not be recorded. (function ProcessGroupHCCL)
[W compiler_depend.ts:2772] Warning: When creating an HCCL process group using the RANK_TABLE_FILE method, the connection may time out. It is recommended to set the timeout duration of HCCL_CONNECT_TIMEOUT to 300 seconds or more. (function operator())
[I ProcessGroupHCCL.cpp:1882] [Rank 2] HCCL watchdog thread started!
[W ProcessGroupHCCL.cpp:944] Process group work ALLREDUCE, seq_num 5 dispatch timeout. repo info
[W ProcessGroupHCCL.cpp:950] Process group work ALLREDUCE, seq_num 5 dispatch success. This warning log can be ignored.
export HCCL_CONNECT_TIMEOUT=1200 HCCL_EXEC_TIMEOUT=1800 ASCEND_GLOBAL_EVENT_ENABLE=1
[INFO] HCCL(40211,python):2025-03-02-07:40:03.112.001 [topoinfo_exchange_agent.cc:120][40211][InitGroupStage][RanktableDetect]topo exchange agent connect server success
{'loss': 1.2051, 'grad_norm': 0.84, 'learning_rate': 1.9e-05, 'epoch': 0.41}
{'train_runtime': 5210.4, 'train_samples_per_second': 9.82, 'epoch': 1.0}"""


@pytest.mark.parametrize("prefix", PREFIXES)
def test_healthy_ascend_run_is_silent(prefix: str) -> None:
    assert failure_findings(_prefixed(prefix, HEALTHY)) == []
