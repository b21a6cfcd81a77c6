"""Writes tests/fixtures/logs/ (the diagnose corpus) and its EXPECTED.json; see the README there."""

import json
import os

D = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "logs")
F = {}
E = {}
INFO8 = "".join(
    f"node-a:{41230 + r}:{41230 + r} [{r}] NCCL INFO Bootstrap : Using eth0:10.0.0.11<0>\n"
    f"node-a:{41230 + r}:{41230 + r} [{r}] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation\n"
    f"node-a:{41230 + r}:{41330 + r} [{r}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.11<0>\n"
    f"node-a:{41230 + r}:{41330 + r} [{r}] NCCL INFO comm 0x55d5c0a0e2f{r} rank {r} nranks 4 cudaDev {r} nvmlDev {r} busId {r}8000 commId 0x9d3e1f2a1b2c3d4e - Init COMPLETE\n"
    for r in range(4)
)

# 1. torch 2.0: OOM (old format) on rank 3; old-format watchdog timeouts on the others; torchrun 1.x/2.0 logging style.
F["torch20_oom_rank3_then_timeouts.log"] = (
    INFO8
    + "".join(f"[rank{r}]: epoch 0 step 1200 loss 1.9{r}2 \n" for r in range(4))
    + """Traceback (most recent call last):
  File "/workspace/train.py", line 211, in <module>
    loss = model(**batch).loss
  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1501, in _call_impl
    return forward_call(*args, **kwargs)
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB (GPU 3; 39.39 GiB total capacity; 35.87 GiB already allocated; 1.12 GiB free; 36.10 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF
[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9611, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=1800000) ran for 1800417 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9611, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=1800000) ran for 1800433 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9611, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=1800000) ran for 1800471 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.
terminate called after throwing an instance of 'std::runtime_error'
  what():  [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9611, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=1800000) ran for 1800417 milliseconds before timing out.
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 81234 closing signal SIGTERM
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 81235 closing signal SIGTERM
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 81236 closing signal SIGTERM
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3 (pid: 81237) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-06-14_03:12:40
  host      : node-a
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 81237)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
)
E["torch20_oom_rank3_then_timeouts.log"] = {
    "root": "RUN101",
    "rank": 3,
    "facts": {"gpu_index": 3, "requested_bytes": 1642824991, "format": "torch<=2.0", "exitcode": 1},
    "cascade": ["RUN151"],
}

# 2. torch 2.1 "capacty" message, hard-wrapped by a 120-column terminal, with colours whose ESC was lost.
msg = (
    "[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacty of 79.15 GiB of which 11.50 MiB is free. "
    "Process 2752205 has 79.13 GiB memory in use. Of the allocated memory 77.87 GiB is allocated by PyTorch, and 654.42 MiB is reserved by PyTorch but unallocated. "
    "If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
)
wrapped = "\n".join(msg[i : i + 120] for i in range(0, len(msg), 120))
F["torch21_oom_wrapped_lost_esc.log"] = (
    '[32m[rank1]: step 88 loss 2.01[0m\n[31m[rank1]: Traceback (most recent call last):[0m\n[rank1]:   File "/srv/train.py", line 57, in <module>\n[rank1]:     out = model(x)\n'
    + wrapped
    + "\n"
)
E["torch21_oom_wrapped_lost_esc.log"] = {
    "root": "RUN102",
    "rank": 1,
    "facts": {
        "gpu_index": 1,
        "requested_bytes": 20971520,
        "free_bytes": 12058624,
        "likely_cause": "fragmentation",
        "format": "torch>=2.1",
    },
}

# 3. OOM traceback inside JSON lines from a log shipper (escaped newlines and quotes).
tb = (
    'Traceback (most recent call last):\\n  File \\"/app/train.py\\", line 140, in step\\n    logits = self.model(ids)\\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 23.54 GiB of which 1.81 GiB is free. "
    "Including non-PyTorch memory, this process has 21.72 GiB memory in use. Of the allocated memory 21.03 GiB is allocated by PyTorch, and 240.18 MiB is reserved by PyTorch but unallocated. "
    "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\\n"
)
F["k8s_json_escaped_oom.log"] = (
    '{"ts":"2024-11-02T08:14:03.120Z","pod":"trainer-0","stream":"stdout","log":"step 5120 loss 1.88\\n"}\n'
    '{"ts":"2024-11-02T08:14:05.880Z","pod":"trainer-0","stream":"stderr","log":"' + tb + '"}\n'
    '{"ts":"2024-11-02T08:14:06.001Z","pod":"trainer-0","stream":"stderr","log":"[W1102 08:14:06.001000 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 77 closing signal SIGTERM\\n"}\n'
)
E["k8s_json_escaped_oom.log"] = {
    "root": "RUN101",
    "facts": {"requested_bytes": 4294967296, "likely_cause": "insufficient_memory"},
}

# 4. Another process holds the GPU (torch 2.3 format naming other processes).
F[
    "oom_other_process.log"
] = """[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.49 GiB is free. Process 31337 has 38.20 GiB memory in use. Including non-PyTorch memory, this process has 39.39 GiB memory in use. Of the allocated memory 37.95 GiB is allocated by PyTorch, and 512.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
"""
E["oom_other_process.log"] = {
    "root": "RUN103",
    "rank": 0,
    "facts": {"other_process_bytes": 41016937677, "likely_cause": "other_process"},
}

# 5. torch 1.x "cached" format.
F[
    "torch1x_oom_cached.log"
] = """RuntimeError: CUDA out of memory. Tried to allocate 392.00 MiB (GPU 0; 11.17 GiB total capacity; 10.21 GiB already allocated; 283.81 MiB free; 177.47 MiB cached)
"""
E["torch1x_oom_cached.log"] = {
    "root": "RUN101",
    "facts": {"requested_bytes": 411041792, "reserved_unallocated_bytes": 186090783, "format": "torch<=2.0"},
}

# 6. Kernel OOM killer (dmesg) plus torchrun -9.
F["host_oom_dmesg_and_torchrun.log"] = (
    INFO8
    + """[Thu Oct  3 10:21:05 2024] python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0
[Thu Oct  3 10:21:05 2024] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/slurm/uid_1000/job_4242,task=python3,pid=81236,uid=1000
[Thu Oct  3 10:21:05 2024] Out of memory: Killed process 81236 (python3) total-vm:212345678kB, anon-rss:198765432kB, file-rss:123456kB, shmem-rss:0kB, UID:1000 pgtables:387654kB oom_score_adj:0
W1003 10:21:07.512000 140022 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 81234 closing signal SIGTERM
E1003 10:21:08.104000 140022 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 2 (pid: 81236) of binary: /usr/bin/python3
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-10-03_10:21:07
  host      : node-a
  rank      : 2 (local_rank: 2)
  exitcode  : -9 (pid: 81236)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 81236
============================================================
"""
)
E["host_oom_dmesg_and_torchrun.log"] = {
    "root": "RUN121",
    "facts": {"pid": 81236, "anon_rss_bytes": 203535802368, "killer": "kernel_oom_killer"},
}

# 7. SIGKILL with no kernel log: rank 5 killed, the others time out (torch 2.4 watchdog format).
tos = "".join(
    f"[rank{r}]:[E1003 10:31:{10 + r:02d}.10433{r}811 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4410, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600{r:03d} milliseconds before timing out.\n"
    for r in (0, 1, 2, 3, 4, 6, 7)
)
F["sigkill_rank5_no_dmesg.log"] = (
    tos
    + """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
pretrain.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2024-10-03_10:41:12
  host      : node-b
  rank      : 0 (local_rank: 0)
  exitcode  : -6 (pid: 90100)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 90100
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-10-03_10:31:02
  host      : node-b
  rank      : 5 (local_rank: 5)
  exitcode  : -9 (pid: 90105)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 90105
============================================================
"""
)
E["sigkill_rank5_no_dmesg.log"] = {
    "root": "RUN121",
    "rank": 5,
    "facts": {"exitcode": -9, "host": "node-b"},
    "cascade": ["RUN151"],
}

# 8. mpirun: segfault on one rank, NCCL remote errors on the others.
F["mpirun_segfault.log"] = """[1,0]<stdout>:step 300 loss 3.11
[1,2]<stderr>:[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.20.5
[1,2]<stderr>:[rank2]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
[1,2]<stderr>:[rank2]: Last error:
[1,2]<stderr>:[rank2]: socketProgress: Connection closed by remote peer node-c<44128>
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun noticed that process rank 3 with PID 0 on node node-c exited on signal 11 (Segmentation fault).
--------------------------------------------------------------------------
"""
E["mpirun_segfault.log"] = {
    "root": "RUN131",
    "rank": 3,
    "facts": {"signal": "SIGSEGV"},
    "cascade": ["RUN172"],
}

# 9. A Python exception on rank 2, lines of several ranks interleaved (even within a line).
F["interleaved_exception_rank2.log"] = """[rank0]: step 41 loss 2.7713[rank1]: step 41 loss 2.7698
[rank2]: Traceback (most recent call last):
[rank3]: step 41 loss 2.7702
[rank2]:   File "/workspace/train.py", line 98, in <module>
[rank0]: step 42 loss 2.7650[rank2]:     batch = next(loader)
[rank2]:   File "/workspace/data.py", line 33, in __next__
[rank2]:     return self.decode(raw)
[rank2]:   File "/workspace/data.py", line 61, in decode
[rank2]:     tokens = json.loads(raw)["tokens"]
[rank2]: KeyError: 'tokens'
[rank0]:[E1003 11:02:41.332012331 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=133, OpType=ALLREDUCE, NumelIn=8388608, NumelOut=8388608, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.
[rank1]:[E1003 11:02:41.332090113 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=133, OpType=ALLREDUCE, NumelIn=8388608, NumelOut=8388608, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.
E1003 11:02:42.104000 140022 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 2 (pid: 5522) of binary: /usr/bin/python3
"""
E["interleaved_exception_rank2.log"] = {
    "root": "RUN132",
    "rank": 2,
    "facts": {"exception": "KeyError", "frame": "/workspace/data.py:61 in decode"},
    "cascade": ["RUN151"],
}

# 10. Only timeouts; one rank is behind (different sequence numbers).
F["watchdog_seq_divergence.log"] = "".join(
    f"[rank{r}]:[E1003 12:00:0{r}.1 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={s}, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n"
    f"[rank{r}]:[E1003 12:00:0{r}.2 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception (either an error or timeout) detected by watchdog at work: {s}, last enqueued NCCL work: {s}, last completed NCCL work: {s - 1}.\n"
    for r, s in ((0, 1201), (1, 1201), (2, 1200), (3, 1201))
)
E["watchdog_seq_divergence.log"] = {
    "root": "RUN151",
    "facts": {"lagging_ranks": [2], "seq_by_rank": {"0": 1201, "1": 1201, "2": 1200, "3": 1201}},
}

# 11. Log viewer line numbers and colour codes that lost ESC, heartbeat monitor (torch 2.3).
F[
    "viewer_heartbeat.log"
] = """   1 | [rank7]:[I ProcessGroupNCCL.cpp:852] [PG 0 Rank 7] ProcessGroupNCCL initialization options: size: 8, global rank: 7
   2 | [31m[rank7]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 7] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1[0m
   3 | [rank7]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 7] [PG 0 Rank 7] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.
"""
E["viewer_heartbeat.log"] = {"root": "RUN152", "rank": 7, "facts": {"heartbeat_timeout_s": 480}}

# 12. NCCL IB retry-exceeded on one rank (NCCL 2.18 format), remote errors on its peers.
F["nccl_ib_retry_exceeded.log"] = (
    INFO8
    + """
node-b:52001:52120 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.21<57926> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid ::ffff:10.0.0.20 remoteGid ::ffff:10.0.0.21
node-b:52001:52120 [1] NCCL INFO transport/net.cc:1298 -> 6
[rank5]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.18.1
[rank5]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
[rank5]: Last error:
[rank5]: NET/IB : Got completion from peer 10.0.0.21<57926> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid ::ffff:10.0.0.20 remoteGid ::ffff:10.0.0.21
"""
)
E["nccl_ib_retry_exceeded.log"] = {
    "root": "RUN173",
    "facts": {"peer": "10.0.0.21", "ib_status": "error 12"},
    "cascade": ["RUN172"],
}

# 13. NCCL cannot find a socket interface (wrong NCCL_SOCKET_IFNAME).
F[
    "nccl_no_socket_interface.log"
] = """node-a:41234:41234 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib9
[2024-10-03 10:00:00] node-a:41234:41234 [0] bootstrap.cc:105 (bootstrapNetInit) NCCL WARN Bootstrap : no socket interface found
node-a:41234:41234 [0] NCCL INFO init.cc:1681 -> 3
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version 2.23.4
[rank0]: ncclInternalError: Internal check failed.
[rank0]: Last error:
[rank0]: Bootstrap : no socket interface found
"""
E["nccl_no_socket_interface.log"] = {"root": "RUN174", "facts": {"interface_problem": True}}

# 14. Rendezvous: torchrun c10d rendezvous timed out on a node whose peers never came.
F[
    "torchrun_rendezvous_timeout.log"
] = """[W1003 09:00:00.000000000 socket.cpp:752] [c10d] The client socket has failed to connect to [node-a]:29400 (errno: 111 - Connection refused).
W1003 09:15:00.000000 311 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1179] The node 'node-b_311_0' has failed to join the rendezvous within the timeout
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError
"""
E["torchrun_rendezvous_timeout.log"] = {"root": "RUN221"}

# 15. Store-based barrier (torch 1.x) that saw 1 of 2 workers.
F[
    "store_barrier_timeout.log"
] = """RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)
"""
E["store_barrier_timeout.log"] = {"root": "RUN221", "facts": {"expected": 2, "joined": 1}}

# 16. Xid 79 in the kernel log, then every rank on that GPU sees CUDA errors.
F[
    "xid79_then_cuda_errors.log"
] = """Oct  3 10:20:55 node-e kernel: [ 8812.123460] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
Oct  3 10:20:55 node-e kernel: [ 8812.123466] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
[rank3]: RuntimeError: CUDA error: unspecified launch failure
[rank3]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
[rank1]:[E1003 10:31:07.104 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.
"""
E["xid79_then_cuda_errors.log"] = {
    "root": "RUN243",
    "facts": {"xid": 79, "pci_bus_id": "0000:3b:00"},
    "cascade": ["RUN244", "RUN151"],
}

# 17. DeepSpeed launcher: a rank was SIGKILLed.
F[
    "deepspeed_sigkill.log"
] = """[2024-10-03 10:00:01,001] [INFO] [launch.py:146:main] WORLD INFO DICT: {'localhost': [0, 1, 2, 3]}
[2024-10-03 10:00:05,100] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)
[2024-10-03 10:31:02,550] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 90105
[2024-10-03 10:31:02,551] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 90106
[2024-10-03 10:31:03,020] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=1', '--deepspeed', 'ds.json'] exits with return code = -9
"""
E["deepspeed_sigkill.log"] = {"root": "RUN121", "facts": {"exitcode": -9, "local_rank": 1}}

# 18. Slurm memory cgroup kill.
F[
    "slurm_oom_kill.log"
] = """slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0. Some of the step tasks have been OOM Killed.
srun: error: node-3: task 5: Out Of Memory
"""
E["slurm_oom_kill.log"] = {"root": "RUN121", "facts": {"oom_kill_events": 1}}

# 19. Truncated paste: the OOM message is cut before its figures.
F["truncated_oom_paste.log"] = """[rank0]: Traceback (most recent call last):
[rank0]:   File "/workspace/train.py", line 211, in <module>
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capac"""
E["truncated_oom_paste.log"] = {"root": "RUN101", "facts": {"format": "cuda_error"}}

# 20. tqdm progress bar (carriage returns) with the error glued to its end, in a DDP job (Lightning's
# start line): a sticky CUDA fault of one process with nothing distributed around it is that program's
# bug, not the job's failure (tests/diagnose/test_false_alarms.py).
F["progress_bar_glued_error.log"] = (
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
    "Epoch 3:  10%|█         | 5/50 [00:01<00:09,  4.61it/s]\rEpoch 3:  12%|█▏        | 6/50 [00:01<00:09,  4.60it/s]"
    "\rEpoch 3:  14%|█▍        | 7/50 [00:01<00:09,  4.62it/s]RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
)
E["progress_bar_glued_error.log"] = {
    "root": "RUN244",
    "facts": {"cuda_error": "an illegal memory access was encountered"},
}

# 21. A clean run full of decoys: must give no finding.
F["decoys_clean_run.log"] = (
    INFO8
    + """/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class.
[rank0]: config: {'timeout': 1800, 'max_error_rate': 0.01, 'oom_retry': False, 'kill_on_nan': True}
[rank0]: step 100 | loss 2.113 | val_error 0.1431 | timeout_s 1800
2024-10-03 10:20:00,001 ERROR data.fetch: shard 17 unavailable, retrying in 5 s (attempt 1/5)
2024-10-03 10:20:00,002 WARNING data.fetch: Traceback (most recent call last):
  File "/workspace/fetch.py", line 12, in fetch
    r.raise_for_status()
requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://data.example/shard-17
[rank0]: Killed 3 stale dataloader workers from the previous epoch
[rank0]: exitcode of the eval subprocess: 0
[W1003 10:00:00.000000000 socket.cpp:752] [c10d] The client socket has failed to connect to [node-a]:29500 (errno: 111 - Connection refused).
"""
    + "".join(f"[rank0]: step {i} | loss 2.0 | val_error 0.14\n" for i in range(101, 160))
    + """node-a:41230:41400 [0] NCCL INFO comm 0x55d5c0a0e2f0 rank 0 nranks 4 cudaDev 0 busId 18000 - Destroy COMPLETE
node-a:41230:41230 [0] NCCL INFO [Service thread] Connection closed by localRank 1
W1003 10:40:00.000000 140022 torch/distributed/elastic/agent/server/api.py:704] [default] worker group successfully finished. Waiting 300 seconds for other agents to finish.
"""
)
E["decoys_clean_run.log"] = {"root": None}

# 22. TORCH_DISTRIBUTED_DEBUG=DETAIL mismatch (older wording).
F[
    "detail_mismatch_old.log"
] = """[rank0]: RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[20, 10], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))
"""
E["detail_mismatch_old.log"] = {"root": "RUN201"}

# 23. CUDA_VISIBLE_DEVICES hides GPUs from higher local ranks.
F["invalid_device_ordinal_torchrun.log"] = """[default4]:Traceback (most recent call last):
[default4]:  File "/workspace/train.py", line 12, in <module>
[default4]:    torch.cuda.set_device(local_rank)
[default4]:RuntimeError: CUDA error: invalid device ordinal
[default4]:CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""
E["invalid_device_ordinal_torchrun.log"] = {"root": "RUN264"}

for name, text in F.items():
    with open(os.path.join(D, name), "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
# CRLF variant of one case (Windows-edited paste).
crlf = F["sigkill_rank5_no_dmesg.log"].replace("\n", "\r\n")
with open(os.path.join(D, "sigkill_rank5_crlf.log"), "w", encoding="utf-8", newline="") as fh:
    fh.write(crlf)
E["sigkill_rank5_crlf.log"] = E["sigkill_rank5_no_dmesg.log"]
# Recorded under real torchrun by tests/helpers/make_real_torchrun_logs.py (not written here).
E["torchrun_real_exception.log"] = {
    "root": "RUN132",
    "rank": 1,
    "facts": {"exception": "ValueError", "exitcode": 1},
    "cascade": ["RUN174"],
}
# Rank 1 raised with its gloo group alive, and torch 2.13 aborted it at exit (-6): the exception,
# not the abort, is the root cause.
E["torchrun_real_exception_abort.log"] = {
    "root": "RUN132",
    "rank": 1,
    "facts": {"exception": "RuntimeError", "exitcode": -6},
    "cascade": ["RUN174"],
}
E["torchrun_real_sigkill.log"] = {"root": "RUN121", "rank": 1, "facts": {"exitcode": -9, "signal": "SIGKILL"}}
E["torchrun_real_segfault.log"] = {
    "root": "RUN131",
    "rank": 1,
    "facts": {"exitcode": -11, "signal": "SIGSEGV"},
}
E["torchrun_real_hang.log"] = {"root": "RUN153", "rank": 0, "facts": {"timeout_ms": 3000}}
E["gloo_skip_3ranks_real.log"] = {"root": "RUN153", "facts": {"timeout_ms": 3000, "backend": "gloo"}}
E["gloo_mismatch_3ranks_real.log"] = {"root": "RUN153"}
# A directory of per-rank files (torchrun --log-dir layout).
pr = os.path.join(D, "per_rank_dir", "attempt_0")
for r in range(3):
    os.makedirs(os.path.join(pr, str(r)), exist_ok=True)
    body = "".join(f"step {i} loss 2.{i}\n" for i in range(5))
    if r == 1:
        body += (
            'Traceback (most recent call last):\n  File "/w/train.py", line 9, in <module>\n    x = torch.empty(n, device="cuda")\n'
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 30.02 GiB is free. "
            "Including non-PyTorch memory, this process has 49.13 GiB memory in use. Of the allocated memory 48.00 GiB is allocated by PyTorch, and 612.00 MiB is reserved by PyTorch but unallocated.\n"
        )
    else:
        body += f"[E1003 10:31:07.104 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=BROADCAST, NumelIn=100, NumelOut=100, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.\n"
    with open(os.path.join(pr, str(r), "stderr.log"), "w") as fh:
        fh.write(body)
E["per_rank_dir"] = {
    "root": "RUN101",
    "facts": {"gpu_index": 1, "requested_bytes": 68719476736},
    "cascade": ["RUN151"],
}
with open(os.path.join(D, "EXPECTED.json"), "w") as fh:
    json.dump(E, fh, indent=1, sort_keys=True)
print(len(E))
