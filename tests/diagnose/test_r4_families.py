# ruff: noqa: E501
"""Families of r4's session (2026-12-06 late), each read at its source and pinned with real and variant lines:

- NCCL's IB async thread reporting the subnet manager reconfiguring a port ("client reregistration", "LID
  change", "SM change", "P_Key change"; 2.4-2.29 wordings): RUN173 at tier 1 (rules/ib_async_events.py);
- an RDMA completion error in a library's own words (UCCL's "CQE ERROR ... status=12(transport retry counter
  exceeded)", Mooncake's "Worker: Process failed for slice (...): ...", benchmarks' "WC error: ..."): RUN173;
  Mooncake's store giving up on a transfer (TRANSFER_FAIL, transfer_incomplete, "Failed to complete transfers
  after"): RUN585 (rules/transfer_engines.py);
- NVSHMEM's team pool / symmetric heap / contract refusals: RUN586; gloo's collective sanity checks ("missing
  connection between rank 0 (this process) and rank 0"): RUN587 (rules/comm_lib_checks.py);
- OneFlow's control client retrying the master (silent) and giving up (RUN222, rules/oneflow_ctrl.py);
- a launcher that ran but could not find the program (slurmstepd's execve ENOENT): RUN389;
- a stack cut inside vLLM's worker start-up collective: RUN363 (rules/init_stacks.py).

And of r4's session of 2026-12-07 (misses of v20's dev half and v19's released held-out half):

- a device's memory exhaustion in a person's words, read by the vocabulary net: hyphenated ("gives
  out-of-memory errors"), the memory named ("Ran out of GPU memory", "out of device memory"), and a Chinese,
  Japanese or Korean writer's error marker ("DDP模式报错 ... GPU0 OUT OF MEMORY"): RUN101;
- the allocator's garbage size ("Tried to allocate more than 1EB memory") under the program's own frame (a
  model's torch.arange(seq_len)): silent, no collective's and no full GPU (RUN151 alone or under a collective);
- an application-class Xid (31 MMU fault, 13, 43) of one GPU with the faulting program's stack printed under
  it: the program's bad access, silent (any hardware-class Xid or several GPUs: the hardware, RUN241/242).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

# -- NCCL IB async events ----------------------------------------------------------------------------------------
# https://github.com/deepspeedai/DeepSpeedExamples/issues/310 (every rank of the node, right after Init COMPLETE)
REREG = "".join(
    f"gpu1:{pid}:{tid} [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : client "
    "reregistration\n"
    for pid, tid in ((5021, 5386), (5023, 5387), (5022, 5382), (5024, 5391))
)
SM_EVENTS = [
    REREG,
    "node-2:4242:4300 [3] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_1:1 Got async event : LID change\n",
    "[2025-01-03 10:00:01] node-2:4242:4300 [3] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_1:1 "
    "Got "
    "non-fatal async event: SM change(9)\n",
    "node-2:4242:4300 [3] transport/net_ib.cc:83 NCCL WARN NET/IB : Got async event : P_Key change\n",
]


@pytest.mark.parametrize("log", SM_EVENTS)
def test_the_subnet_manager_reconfiguring_the_port_is_the_fabric(log: str) -> None:
    check_root(log, "RUN173")
    f = root_finding(log)
    assert f is not None and "ib_async_event" in f.facts


def test_the_event_names_its_device() -> None:
    check_root(SM_EVENTS[1], "RUN173", {"ib_async_event": "LID change", "device": "mlx5_1:1"})


def test_a_cause_that_names_itself_comes_first() -> None:
    oom = (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.02 GiB is free.\n"
    )
    check_root(REREG + oom, "RUN101")


IB_EVENT_DECOYS = [
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : GID table change\n",
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port active\n",
    "gpu1:5021:5386 [0] transport/net_ib/common.cc:151 NCCL WARN NET/IB : mlx5_0:1 GID table changed\n",
    "gpu1:5021:5386 [0] NCCL INFO NET/IB : mlx5_0:1 speed change detected: 200000 -> 400000 Mbps\n",
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : last WQE reached\n",
]


@pytest.mark.parametrize("log", IB_EVENT_DECOYS)
def test_events_that_are_no_reconfiguration_stay_silent(log: str) -> None:
    assert root_finding(log) is None, failure_findings(log)


# -- RDMA completions in a library's words, Mooncake's store -------------------------------------------------------
# https://github.com/uccl-project/uccl/issues/799
UCCL = "".join(
    f"CQE ERROR wr_id={w} status=12(transport retry counter exceeded) opcode=1 byte_len=0 vendor_err=0xa "
    f"qp_num=0x2c{q}\n"
    for w, q in (("3", "10"), ("4294967296", "14"), ("4294967316", "04"))
)
COMPLETIONS = [
    (UCCL, {"reporter": "UCCL", "wc_status": 12}),
    (
        "[thread=2] CQE ERROR wr_id=17 status=13(RNR retry counter exceeded) opcode=0 byte_len=0 "
        "vendor_err=0x88 "
        "qp_num=0x1a3\n",
        {"fabric_error": "RNR retry counter exceeded"},
    ),
    (
        "E0611 01:02:03.000000    77 worker_pool.cpp:245] Worker: Process failed for slice (opcode: 0, "
        "source_addr: 0x7f3a10000000, length: 65536, dest_addr: 0x7f4b20000000, local_nic: mlx5_0, peer_nic: "
        "node-2@mlx5_0, dest_rkey: 1234, retry_cnt: 0, max_retry_cnt: 3): transport retry counter exceeded\n",
        {"reporter": "Mooncake's transfer engine"},
    ),
    ("WC error: remote access error\n", {"fabric_error": "remote access error"}),
    ("RDMA error: local protection error\n", {"fabric_error": "local protection error"}),
]


@pytest.mark.parametrize(("log", "facts"), COMPLETIONS)
def test_a_library_reports_a_failed_rdma_completion(log: str, facts: dict[str, object]) -> None:
    check_root(log, "RUN173", facts)


COMPLETION_DECOYS = [
    "HTTP client got bad response error 502 from the registry, retrying\n",
    "node1:1234:5678 [0] NCCL INFO NCCL_IB_RETRY_CNT set by environment to 7.\n",
    "local access error log rotated\n",
]


@pytest.mark.parametrize("log", COMPLETION_DECOYS)
def test_the_words_without_a_completion_stay_silent(log: str) -> None:
    assert root_finding(log) is None, failure_findings(log)


# https://github.com/kvcache-ai/Mooncake/issues/397
MOONCAKE = """W0523 06:50:40.064657   223 client.cpp:450] Transfer incomplete, retrying... (attempt 2/3)
E0523 06:50:40.074718   223 client.cpp:444] Transfer failed for task0
W0523 06:50:40.074728   223 client.cpp:450] Transfer incomplete, retrying... (attempt 3/3)
E0523 06:50:40.084792   223 client.cpp:460] transfer_incomplete max_attempts=3
E0523 06:50:40.085733   223 store_py.cpp:367] Put operation failed with error: TRANSFER_FAIL
#### decode
WARNING 05-23 06:39:54 [mooncake_store_connector.py:181] [rank0]: Failed to receive all KVs and hidden states, redo model forwarding.
"""
MOONCAKE_LINES = [
    MOONCAKE,
    "E0611 01:02:03.000000    77 transfer_task.cpp:882] Failed to complete transfers after 60000 "
    "milliseconds for "
    "batch 7\n",
    "E0611 01:02:03.000000    77 client.cpp:413] Failed to complete transfers after 60 seconds\n",
    "E0611 01:02:03.000000    77 client_service.cpp:1767] Transfer failed for key: prefill-42 with error: "
    "-800\n",
    "E0611 01:02:03.000000    77 real_client.cpp:5320] Batch get store object failed with error: "
    "TRANSFER_FAIL\n",
]


@pytest.mark.parametrize("log", MOONCAKE_LINES)
def test_mooncake_store_gave_up_on_a_transfer(log: str) -> None:
    check_root(log, "RUN585", {"engine": "mooncake"})


MOONCAKE_DECOYS = [
    "W0523 06:50:40.064657   223 client.cpp:450] Transfer incomplete, retrying... (attempt 1/3)\n",
    "E0523 06:50:40.085733   223 store_py.cpp:367] Put operation failed with error: OBJECT_ALREADY_EXISTS\n",
]


@pytest.mark.parametrize("log", MOONCAKE_DECOYS)
def test_a_retry_or_the_stores_own_state_is_no_transfer_failure(log: str) -> None:
    assert not [f for f in failure_findings(log) if f.code == "RUN585"], failure_findings(log)


# -- NVSHMEM's limits, gloo's checks ---------------------------------------------------------------------------------
# https://github.com/NVIDIA/nvshmem/issues/100
NVSHMEM_TEAMS = """/dvs/p4/build/sw/rel/gpgpu/toolkit/r13.2/main_nvshmem/src/host/team/team_internal.cpp:1821: error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) No more teams available (max = 7), try setting NVSHMEM_MAX_TEAMS environment variable

/dvs/p4/build/sw/rel/gpgpu/toolkit/r13.2/main_nvshmem/src/host/team/team_internal.cpp:nvshmemi_team_allocate_resources:1975: Failed to set team index for team -1 is_dupl: 0
"""
NVSHMEM = [
    (NVSHMEM_TEAMS, {"resource": "teams", "max_teams": 7}),
    (
        "/workspace/nvshmem/src/host/team/team_internal.cpp:925: Unable to allocate enough duplicate teams. "
        "This "
        "will cause significant performance degradation. Please increase NVSHMEM_MAX_TEAMS. Exiting\n",
        {"resource": "teams"},
    ),
    (
        "src/host/team/team_internal.cpp:nvshmemi_team_init:1278: Requested 40 teams, but only 32 are "
        "supported\n",
        {"resource": "teams"},
    ),
    (
        "/workspace/nvshmem/src/host/mem/mem_heap.cpp:nvshmemi_symmetric_heap_static::allocate_symmetric_memory:"
        "2266: nvshmem malloc failed (hint: check if total allocation has exceeded NVSHMEM symmetric size = "
        "1073741824, NVSHMEM symmetric size can be increased using NVSHMEM_SYMMETRIC_SIZE environment "
        "variable)\n",
        {"resource": "symmetric_heap", "symmetric_size": 1073741824},
    ),
    (
        "/workspace/nvshmem/src/host/mem/mem_heap.cpp:2157: non-zero status: 4 symmetry check for size "
        "failed\n",
        {"problem": "symmetry"},
    ),
    (
        "src/host/init/init.cu:nvshmemi_check_state_and_init:1197: nvshmem API called before nvshmem_init\n",
        {},
    ),
]


@pytest.mark.parametrize(("log", "facts"), NVSHMEM)
def test_nvshmem_refused_a_pool_or_a_call(log: str, facts: dict[str, object]) -> None:
    check_root(log, "RUN586", facts)


NVSHMEM_DECOYS = [
    "  NVSHMEM_MAX_TEAMS             32 (type: long, default: 32)\n",
    "  NVSHMEM_SYMMETRIC_SIZE        1073741824 (type: size, default: 1073741824)\n",
    "matrix symmetry check failed for input A, falling back to the general solver\n",
]


@pytest.mark.parametrize("log", NVSHMEM_DECOYS)
def test_nvshmem_settings_and_other_symmetry_checks_stay_silent(log: str) -> None:
    assert root_finding(log) is None, failure_findings(log)


# https://github.com/pytorch/gloo/issues/209 (Horovod's gloo controller, one process)
GLOO_SELF = """Wed Aug 14 16:00:50 2019[0]<stderr>:terminate called after throwing an instance of 'gloo::EnforceNotMet'
Wed Aug 14 16:00:50 2019[0]<stderr>:  what():  [enforce fail at horovod/third_party/gloo/gloo/allgather.cc:31] context->getPair(recvRank). missing connection between rank 0 (this process) and rank 0
Wed Aug 14 16:00:50 2019[0]<stderr>:Aborted
Process 0 exit with status code 134
"""
GLOO = [
    (GLOO_SELF, {"problem": "missing_pair", "rank": 0, "peer_rank": 0, "collective": "allgather"}),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/allreduce.cc:161] "
        "context->getPair(recvRank). "
        "missing connection between rank 1 (this process) and rank 0\n",
        {"problem": "missing_pair", "peer_rank": 0, "collective": "allreduce"},
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/allgather.cc:39] out->size == in->size * "
        "context->size. 4096 vs 8192\n",
        {"collective": "allgather", "gloo_source": "allgather.cc:39"},
    ),
    ("missing connection between rank 1 (this process) and rank 3\n", {"peer_rank": 3}),
]


@pytest.mark.parametrize(("log", "facts"), GLOO)
def test_gloo_refused_a_collectives_context_or_buffers(log: str, facts: dict[str, object]) -> None:
    check_root(log, "RUN587", facts)


def test_gloos_transport_checks_are_not_this_row() -> None:
    log = (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
        "op.preamble.length <= "
        "op.nbytes. 881392 vs 881388\n"
    )
    assert not [f for f in failure_findings(log) if f.code == "RUN587"]


# -- OneFlow's control plane ----------------------------------------------------------------------------------------
# https://github.com/Oneflow-Inc/oneflow/issues/10547: the first attempts while the master starts
ONEFLOW_WAIT = """(xzp) ai@ubuntu:~/of$ python -m oneflow.distributed.launch --nproc_per_node 2 ./ddp_train.py
W20240730 07:54:40.090461 27910 rpc_client.cpp:190] LoadServer 127.0.0.1 Failed at 0 times error_code 14 error_message failed to connect to all addresses
W20240730 07:54:40.124917 27911 rpc_client.cpp:190] LoadServer 127.0.0.1 Failed at 0 times error_code 14 error_message failed to connect to all addresses
"""


def test_oneflow_retrying_the_master_is_silent() -> None:
    assert root_finding(ONEFLOW_WAIT) is None, failure_findings(ONEFLOW_WAIT)


@pytest.mark.parametrize(
    "line",
    [
        "W20240730 08:04:40.090461 27910 rpc_client.cpp:190] LoadServer 10.0.0.1 Failed at 59 times "
        "error_code 14 "
        "error_message failed to connect to all addresses",
        "F20240730 08:04:50.120000 27910 rpc_client.cpp:197] Check failed: retry_idx < max_retry_num (60 vs. "
        "60)",
        "F20240730 08:04:50.120000 27910 rpc_client.cpp:197] Check failed: (retry_idx) < (max_retry_num) (60 "
        "vs. 60)",
    ],
)
def test_oneflow_giving_up_on_the_master_is_the_store(line: str) -> None:
    check_root(ONEFLOW_WAIT + line + "\n", "RUN222", {"framework": "oneflow"})


# -- a program the launcher could not find; vLLM's start-up collective ------------------------------------------------
# https://github.com/NVIDIA/deepops/issues/785
SRUN_NOT_FOUND = """$ srun -N 1 -G 1 --ntasks-per-node=1 --mpi=pmix --exclusive  --container-image=deepops/nccl-tests-tf20.06-ubuntu18.04:latest all_reduce_perf -b 1M -e 4G -f 2 -g 1
pyxis: importing docker image ...
slurmstepd: error: execve(): all_reduce_perf: No such file or directory
srun: error: host-01: task 1: Exited with exit code 2
"""


def test_a_program_missing_from_the_container_is_the_environment() -> None:
    check_root(SRUN_NOT_FOUND, "RUN389", {"executable": "all_reduce_perf"})


_VLLM = "(RayWorkerWrapper pid=5280) ERROR 04-26 01:59:07 worker_base.py:157] "
# https://github.com/vllm-project/vllm/issues/4383 (cut before the exception line)
VLLM_INIT_CUT = "".join(
    _VLLM + ln + "\n"
    for ln in (
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker_base.py", line 149, in execute_method',
        "    return executor(*args, **kwargs)",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 110, in init_device',
        "    init_worker_distributed_environment(self.parallel_config, self.rank,",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 313, in '
        "init_worker_distributed_environment",
        "    torch.distributed.all_reduce(torch.zeros(1).cuda())",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 72, in wrapper',
        "    return func(*args, **kwargs)",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 1992, in '
        "all_reduce",
    )
)


def test_a_stack_cut_in_vllms_start_up_collective_is_the_communicator() -> None:
    check_root(VLLM_INIT_CUT, "RUN363", {"stage": "vllm_worker_init", "op": "all_reduce"})


def test_a_stack_cut_in_a_collective_elsewhere_stays_a_timeout() -> None:
    later = VLLM_INIT_CUT.replace("in init_device", "in execute_model").replace(
        "in init_worker_distributed_environment", "in _run_workers"
    )
    check_root(later, "RUN151", {"cut": True})


# -- a device's memory exhaustion in a person's words --------------------------------------------------------------
# tensorflow/recommenders#308, huggingface/diffusers#4925 (titles), bubbliiiing/yolov5-pytorch#79 (a Chinese
# title glued above the launch), and variants of the same spellings.
OOM_IN_WORDS = [
    "Quickstart with MirroredStrategy raises Ran out of GPU memory Error",
    "Training Controlnet SDXL distributed gives out-of-memory errors",
    "[BUG] CUDA out-of-memory error when fine-tuning Llama with FSDP",
    "Stable Diffusion training runs out of GPU memory after 200 steps",
    "RuntimeError: ran out of device memory while loading the checkpoint on cuda:1",
    "DDP模式报错，默认2、3卡，还是会报GPU0 OUT OF MEMORY，模型是L\n"
    "(pytorch) ubuntu@box:~/yolo$ CUDA_VISIBLE_DEVICES=2,3 python -m torch.distributed.launch "
    "--nproc_per_node=2 train.py\n",
    "多卡训练出错：GPU out of memory\nEpoch 1/100\n",
]


@pytest.mark.parametrize("log", OOM_IN_WORDS)
def test_a_device_oom_in_a_persons_words_is_the_gpus_memory(log: str) -> None:
    check_root(log, "RUN101", {"inferred_from": "words"})


OOM_WORDS_NEAR_MISSES = [
    # the marker denied: no error (any more)
    "设置之后不再报错 GPU out of memory，训练正常\nEpoch 1/100\n",
    "没有报错，GPU0 OUT OF MEMORY 的提示也没有了\nEpoch 1/100\n",
    # the memory ruled out, or the host's
    "Training resumed; no out-of-memory errors since the fix",
    "Error: ran out of host memory while pinning the dataset",
    "INFO: device memory 79.1 GiB, out-of-memory guard enabled\n",
]


@pytest.mark.parametrize("log", OOM_WORDS_NEAR_MISSES)
def test_oom_words_that_report_no_device_exhaustion_stay_silent(log: str) -> None:
    assert root_finding(log) is None, failure_findings(log)


def test_the_hosts_out_of_memory_handler_is_no_gpu() -> None:
    for log in (
        "slurmstepd: error: Detected 1 oom-kill event(s) in step 3955284.0 cgroup. Some of your processes may "
        "have been killed by the cgroup out-of-memory handler.",
        "[12345.678] Memory cgroup out-of-memory: Killed process 4242 (python) total-vm:91234kB, "
        "anon-rss:81234kB",
    ):
        assert [f.code for f in failure_findings(log)][:1] == ["RUN121"], failure_findings(log)


# -- the allocator's garbage size under the program's own frame --------------------------------------------------
# zai-org/ChatGLM-6B#790: a model split over GPUs computed a garbage seq_len; no collective, no full GPU.
GARBAGE_LINE = "OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory."
CHATGLM = (
    "│ /home/u/.cache/huggingface/modules/transformers_modules/ChatGLM-6B/modeling_chatglm.py:202 in  │\n"
    "│ forward                                                                                          │\n"
    "│                                                                                                  │\n"
    "│ ❱  202 │   │   │   t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)         │\n"
    "╰──────────────────────────────────────────────────────────────────────────────────────────────────╯\n"
    + GARBAGE_LINE
    + "\n"
)
OWN_FRAME = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/infer.py", line 88, in <module>\n'
    "    out = model.generate(ids, max_new_tokens=n)\n"
    '  File "/workspace/model/rope.py", line 41, in forward\n'
    "    t = torch.arange(seq_len, device=x.device)\n"
    "torch.cuda." + GARBAGE_LINE + "\n"
)


@pytest.mark.parametrize("log", [CHATGLM, OWN_FRAME])
def test_a_garbage_size_made_by_the_programs_own_code_is_no_oom_and_no_collective(log: str) -> None:
    assert [f.code for f in failure_findings(log) if f.code in ("RUN101", "RUN151")] == [], failure_findings(
        log
    )


BROADCAST_FRAME = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/workspace/train.py", line 120, in evaluate\n'
    "[rank1]:     dist.broadcast_object_list(objs, src=0)\n"
    '[rank1]:   File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2246, in '
    "broadcast_object_list\n"
    "[rank1]:     object_tensor = torch.empty(\n"
    "[rank1]: torch.cuda." + GARBAGE_LINE + "\n"
)
OWN_GATHER = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/workspace/utils/comm.py", line 30, in all_gather_object_cpu\n'
    '[rank1]:     buf = torch.empty(size.item(), device="cuda")\n'
    "[rank1]: torch.cuda." + GARBAGE_LINE + "\n"
)


@pytest.mark.parametrize("log", [BROADCAST_FRAME, OWN_GATHER, "torch.cuda." + GARBAGE_LINE])
def test_a_garbage_size_under_a_collective_or_alone_stays_the_collectives(log: str) -> None:
    check_root(log, "RUN151", {"garbage_size": True})


# -- an application-class Xid with the faulting program's stack under it ------------------------------------------
# sgl-project/sglang#29160: one Xid 31 of a server's process, its scheduler's stack printed below.
XID31_SGLANG = (
    "[Wed Jun 24 15:44:42 2026] NVRM: Xid (PCI:0000:70:00): 31, pid=684430, name=python3, channel 0x00000002, "
    "intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 UNRECOGNIZED_CLIENT faulted @ 0x1827f9_000b4bc0. Fault is of "
    "type UNRECOGNIZED_FAULT UNRECOGNIZED_ACCESS_TYPE\n"
    "scheduler.py:4076  run_scheduler_process\n"
    "    scheduler.py:3039  run_batch\n"
    "      model_runner.py:3339  forward_exte\n"
)
XID31 = (
    "[ 8812.123] NVRM: Xid (PCI:0000:3b:00): 31, pid=5121, name=python, Ch 00000008, intr 00000000. MMU Fault: "
    "ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n"
)
XID31_TRACEBACK = (
    XID31 + "Traceback (most recent call last):\n"
    '  File "/workspace/train.py", line 77, in <module>\n'
    "    loss = model(batch).sum()\n"
)


@pytest.mark.parametrize("log", [XID31_SGLANG, XID31_TRACEBACK])
def test_an_application_xid_with_the_programs_stack_is_no_hardware_finding(log: str) -> None:
    assert root_finding(log) is None, failure_findings(log)


XID_HARDWARE = [
    # the record alone (pytorch/pytorch illegal-access thread: a dmesg line quoted): the driver's word stands
    XID31,
    # several GPUs faulting
    XID31 + XID31.replace("3b:00", "5e:00").replace("5121", "5122") + "scheduler.py:3039  run_batch\n",
    # a hardware-class Xid beside it
    "[ 8812.100] NVRM: Xid (PCI:0000:3b:00): 48, pid=5121, name=python, An uncorrectable double bit error (DBE) "
    "has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
    + XID31
    + "scheduler.py:3039  run_batch\n",
    "[ 8812.123] NVRM: Xid (PCI:0000:3b:00): 79, pid=5121, name=python, GPU has fallen off the bus.\n"
    "scheduler.py:3039  run_batch\n",
]


@pytest.mark.parametrize("log", XID_HARDWARE)
def test_xids_without_the_programs_stack_or_of_the_hardware_stay_findings(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code in ("RUN241", "RUN242", "RUN243"), failure_findings(log)
