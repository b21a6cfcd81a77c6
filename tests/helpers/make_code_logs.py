"""Per-code bad/good log fixtures. Formats follow the sources named in tests/fixtures/logs/README.md."""

import os

B = {}
G = {}
INFO = """node-a:41234:41234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.11<0>
node-a:41234:41234 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation
node-a:41234:41234 [0] NCCL INFO cudaDriverVersion 12040
NCCL version 2.20.5+cuda12.4
node-a:41234:41301 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.11<0>
node-a:41234:41301 [0] NCCL INFO comm 0x55d5c0a0e2f0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9d3e1f2a1b2c3d4e - Init COMPLETE
"""
STEPS = "".join(
    f"[rank0]: step {i} loss {2.5 - i * 0.01:.3f} lr 3.0e-04 tokens/s 41234\n" for i in range(1, 6)
)
TORCHRUN_TAIL = """W1003 10:21:07.512000 140022 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 81235 closing signal SIGTERM
W1003 10:21:07.513000 140022 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 81236 closing signal SIGTERM
E1003 10:21:08.104000 140022 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: {code}) local_rank: {lr} (pid: 81234) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 919, in main
    run(args)
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 263, in launch_agent
    raise ChildFailedError(
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
  rank      : {rank} (local_rank: {lr})
  exitcode  : {code} (pid: 81234)
  error_file: <N/A>
  traceback : {tb}
============================================================
"""


def tail(
    code, rank=0, lr=0, tb="To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
):
    return TORCHRUN_TAIL.format(code=code, rank=rank, lr=lr, tb=tb)


B["RUN101"] = (
    STEPS
    + """[rank0]: Traceback (most recent call last):
[rank0]:   File "/workspace/train.py", line 88, in <module>
[rank0]:     loss = model(batch).loss
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 12.28 GiB is free. Including non-PyTorch memory, this process has 66.86 GiB memory in use. Of the allocated memory 65.12 GiB is allocated by PyTorch, and 1.05 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
"""
    + tail(1)
)
G["RUN101"] = (
    STEPS
    + """[rank0]: max_batch_probe: batch 64 fits, trying 128
[rank0]: memory allocated 61.3 GiB, reserved 64.0 GiB, out-of-memory retries 0
[rank0]: training finished after 5 steps
"""
)
B["RUN102"] = (
    STEPS
    + """[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 2 has a total capacty of 39.39 GiB of which 1.66 GiB is free. Including non-PyTorch memory, this process has 37.72 GiB memory in use. Of the allocated memory 32.09 GiB is allocated by PyTorch, and 5.12 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF
"""
    + tail(1, 2, 2)
)
G["RUN102"] = (
    STEPS + "[rank2]: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True set; avoiding fragmentation\n"
)
B["RUN103"] = """Traceback (most recent call last):
  File "/home/ana/finetune.py", line 41, in <module>
    model.to("cuda")
RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 23.69 GiB total capacity; 2.11 GiB already allocated; 214.56 MiB free; 2.31 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF
"""
G["RUN103"] = "nvidia-smi: GPU 0 memory 2.3 GiB / 24 GiB, processes: python (2.3 GiB)\ntraining done\n"
B["RUN121"] = (
    INFO
    + STEPS
    + """[1711234.123456] python invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0
[1711234.123789] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/user.slice,task=python3,pid=81234,uid=1000
[1711234.123801] Out of memory: Killed process 81234 (python3) total-vm:412345678kB, anon-rss:498765432kB, file-rss:123456kB, shmem-rss:0kB, UID:1000 pgtables:987654kB oom_score_adj:0
"""
    + tail(-9, tb="Signal 9 (SIGKILL) received by PID 81234")
)
G["RUN121"] = (
    INFO
    + STEPS
    + "W1003 10:21:07.512000 140022 torch/distributed/elastic/agent/server/api.py:704] Worker group FINISHED.\n"
)
B["RUN122"] = """[rank1]: Traceback (most recent call last):
[rank1]:   File "/workspace/data.py", line 19, in load_shard
[rank1]:     buf = torch.empty(n, dtype=torch.uint8)
[rank1]: RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 274877906944 bytes. Error code 12 (Cannot allocate memory)
""" + tail(1, 1, 1)
G["RUN122"] = "[rank1]: loaded shard 3 (2.1 GiB) into pinned memory\n[rank1]: step 1 loss 2.311\n"
B["RUN131"] = (
    STEPS
    + """[rank3]: Fatal Python error: Segmentation fault
[rank3]:
[rank3]: Thread 0x00007f3a2b7fe700 (most recent call first):
[rank3]:   File "/usr/lib/python3.10/threading.py", line 324 in wait
[rank3]:
[rank3]: Current thread 0x00007f3a9c1c4740 (most recent call first):
[rank3]:   File "/workspace/ext/fused_adam.py", line 77 in step
[rank3]:   File "/workspace/train.py", line 102 in <module>
"""
    + tail(-11, 3, 3, tb="Signal 11 (SIGSEGV) received by PID 81234")
)
G["RUN131"] = STEPS + "[rank3]: faulthandler enabled; dumping tracebacks on SIGUSR1\n"
B["RUN132"] = (
    INFO
    + """[rank1]: Traceback (most recent call last):
[rank1]:   File "/workspace/train.py", line 131, in <module>
[rank1]:     main()
[rank1]:   File "/workspace/train.py", line 117, in main
[rank1]:     batch = collate(samples)
[rank1]:   File "/workspace/data.py", line 54, in collate
[rank1]:     raise ValueError(f"sample {idx} has {len(toks)} tokens, expected {seq_len}")
[rank1]: ValueError: sample 91823 has 0 tokens, expected 4096
"""
    + tail(1, 1, 1)
)
G["RUN132"] = (
    INFO
    + STEPS
    + """2024-10-03 10:20:00,001 WARNING retrying download after error
Traceback (most recent call last):
  File "/workspace/fetch.py", line 12, in fetch
    r.raise_for_status()
requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://data.example/shard-3
"""
    + "".join(f"[rank0]: step {i} loss 2.1\n" for i in range(6, 60))
)
B["RUN133"] = INFO + STEPS + tail(1, 5, 1)
G["RUN133"] = (
    INFO
    + STEPS
    + "W1003 10:30:00.000000 140022 torch/distributed/elastic/agent/server/api.py:704] Worker group SUCCEEDED\n"
)
B["RUN151"] = (
    INFO
    + """[rank1]:[E1003 10:31:07.104332811 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52428800, NumelOut=52428800, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.
[rank1]:[E1003 10:31:07.104512233 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 668, last enqueued NCCL work: 668, last completed NCCL work: 667.
[rank0]:[E1003 10:31:07.112007451 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=669, OpType=ALLREDUCE, NumelIn=52428800, NumelOut=52428800, Timeout(ms)=600000) ran for 600044 milliseconds before timing out.
[rank0]:[E1003 10:31:07.112150032 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 669, last enqueued NCCL work: 669, last completed NCCL work: 668.
[rank0]:[E1003 10:31:07.112201880 ProcessGroupNCCL.cpp:630] [Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
[rank0]:[E1003 10:31:07.112210442 ProcessGroupNCCL.cpp:636] [Rank 0] To avoid data inconsistency, we are taking the entire process down.
"""
)
G["RUN151"] = (
    INFO
    + "[rank0]:[W1003 10:00:00.000000000 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular device, or call init_process_group() with a device_id.\n"
    + STEPS
)
B[
    "RUN152"
] = """[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2
[rank25]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank 25] ProcessGroupNCCL preparing to dump debug info.
[rank25]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 25] [PG 0 Rank 25] ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api, or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang.
"""
G["RUN152"] = (
    "[rank25]:[I ProcessGroupNCCL.cpp:852] [PG 0 Rank 25] ProcessGroupNCCL initialization options: size: 32, global rank: 25, TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, TORCH_DISTRIBUTED_DEBUG: OFF, NCCL_DEBUG: WARN, TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: 600\n"
)
B["RUN153"] = """[rank0]: Traceback (most recent call last):
[rank0]:   File "/tmp/job/step.py", line 14, in <module>
[rank0]:     dist.all_reduce(t)
[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for recv operation to complete
"""
G["RUN153"] = (
    "[rank0]: gloo process group initialized (timeout 0:30:00)\n[rank0]: all_reduce done in 0.8 ms\n"
)
B["RUN171"] = """
node-b:52001:52120 [3] misc/socket.cc:538 NCCL WARN socketStartConnect: Connect to 10.0.0.12<43251> failed : Software caused connection abort
node-b:52001:52120 [3] NCCL INFO misc/socket.cc:549 -> 2
[rank11]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
[rank11]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
[rank11]: Last error:
[rank11]: socketStartConnect: Connect to 10.0.0.12<43251> failed : Software caused connection abort
"""
G["RUN171"] = INFO
B[
    "RUN172"
] = """[rank6]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.18.1
[rank6]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
[rank6]: Last error:
[rank6]: NET/IB : Got completion from peer 10.0.0.14<55123> with error 12, opcode 0, len 0, vendor err 129 (Recv)
"""
G["RUN172"] = INFO + STEPS
B["RUN173"] = """
node-c:61000:61234 [2] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.21<57926> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=524288 vendor_err=129 req_type=Send localGid ::ffff:10.0.0.20 remoteGids::ffff:10.0.0.21 hca mlx5_2
node-c:61000:61234 [2] NCCL INFO transport/net.cc:1298 -> 6
"""
G["RUN173"] = INFO + "node-a:41234:41301 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
B["RUN174"] = """
node-d:7001:7100 [0] misc/socket.cc:50 NCCL WARN socketProgressOpt: Call to recv from 10.0.0.31<45678> failed : Connection reset by peer
node-d:7001:7100 [0] NCCL INFO misc/socket.cc:752 -> 6
"""
G["RUN174"] = INFO + "node-a:41234:41234 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
B["RUN191"] = """
node-a:41234:41234 [0] enqueue.cc:1936 NCCL WARN Invalid config blocking attribute value -2147483648
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.17.1
[rank0]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
[rank0]: Last error:
[rank0]: Invalid config blocking attribute value -2147483648
"""
G["RUN191"] = INFO
B[
    "RUN192"
] = """[rank2]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error - please report this issue to the NCCL developers, NCCL version 2.14.3
[rank2]: ncclInternalError: Internal check failed.
[rank2]: Last error:
[rank2]: Error : ring 0 does not loop back to start (2 != 0)
"""
G["RUN192"] = INFO
B["RUN193"] = """
node-a:41234:41301 [1] init.cc:735 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 18000
node-a:41234:41301 [1] NCCL INFO init.cc:1358 -> 5
"""
G["RUN193"] = INFO
B[
    "RUN194"
] = """[rank4]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
[rank4]: ncclUnhandledCudaError: Call to CUDA function failed.
[rank4]: Last error:
[rank4]: Cuda failure 'invalid resource handle'
"""
G["RUN194"] = INFO
B["RUN195"] = """Traceback (most recent call last):
  File "/workspace/train.py", line 3, in <module>
    import torch
  File "/usr/local/lib/python3.10/dist-packages/torch/__init__.py", line 237, in <module>
    from torch._C import *  # noqa: F403
ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister
"""
G["RUN195"] = "Python 3.10.12\ntorch 2.3.1+cu121, NCCL (2, 20, 5)\n"
B[
    "RUN201"
] = """[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=23, OpType=BROADCAST, TensorShape=[1024], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=23, OpType=ALLREDUCE, TensorShape=[1024], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects: 	 Op type: BROADCASTvs ALLREDUCE
"""
G["RUN201"] = "[rank1]: TORCH_DISTRIBUTED_DEBUG=DETAIL: collective fingerprints checked for 23 collectives\n"
B[
    "RUN202"
] = """[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by
[rank1]: making sure all `forward` function outputs participate in calculating loss.
[rank1]: If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).
[rank1]: Parameters which did not receive grad for rank 1: aux_head.bias, aux_head.weight
[rank1]: Parameter indices which did not receive grad for rank 1: 14 15
"""
G["RUN202"] = "[rank1]: DDP: find_unused_parameters=True; 2 parameters unused this iteration\n"
B[
    "RUN203"
] = """[rank0]: RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same part of your model, it would result in the same set of parameters been used by different reentrant backward passes multiple times, and hence marking a variable ready multiple times. DDP does not support such use cases in default. You can try to use _set_static_graph() as a workaround if your module graph does not change over iterations.
[rank0]: Parameter at index 73 with name blocks.11.mlp.fc2.weight has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.
"""
G["RUN203"] = "[rank0]: DDP static_graph=True\n" + STEPS
B[
    "RUN221"
] = """[E1003 09:00:01.000000 311 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1179] The node 'node-b_311_0' has failed to join the rendezvous
torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError
"""
G["RUN221"] = (
    "[I1003 09:00:01.000000 311 torch/distributed/elastic/agent/server/api.py:525] [default] Rendezvous complete for workers. Result:\n"
)
B[
    "RUN222"
] = """[W1003 09:00:01.000000000 socket.cpp:752] [c10d] The client socket has failed to connect to [10.0.0.99]:29500 (errno: 110 - Connection timed out).
torch.distributed.DistNetworkError: The client socket has timed out after 900000ms while trying to connect to (10.0.0.99, 29500).
"""
G["RUN222"] = (
    "[W1003 09:00:01.000000000 socket.cpp:752] [c10d] The client socket has failed to connect to [node-a]:29500 (errno: 111 - Connection refused).\n[rank1]: connected to store, world size 8\n"
    + STEPS
)
B[
    "RUN223"
] = """[W1003 09:00:01.000000000 socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).
[W1003 09:00:01.000000000 socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).
[E1003 09:00:01.000000000 socket.cpp:500] [c10d] The server socket has failed to listen on any local network address.
torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use
"""
G["RUN223"] = "store listening on 0.0.0.0:29500\n" + STEPS
B["RUN241"] = (
    "Oct  3 10:20:55 node-e kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=81234, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address\n"
)
G["RUN241"] = "Oct  3 10:20:55 node-e kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07\n"
B["RUN242"] = (
    "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n[rank3]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
)
G["RUN242"] = "nvidia-smi: Volatile Uncorr. ECC: 0\n" + STEPS
B["RUN243"] = """[ 8812.123456] NVRM: GPU at PCI:0000:3b:00: GPU-4e8f1a2b-9c3d-4e5f-8a7b-6c5d4e3f2a1b
[ 8812.123460] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[ 8812.123466] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
"""
G["RUN243"] = "[ 8812.123456] NVRM: GPU at PCI:0000:3b:00: GPU-4e8f1a2b-9c3d-4e5f-8a7b-6c5d4e3f2a1b\n"
B["RUN244"] = """[rank5]: RuntimeError: CUDA error: an illegal memory access was encountered
[rank5]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
[rank5]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1
[rank5]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""
G["RUN244"] = "[rank5]: CUDA_LAUNCH_BLOCKING=1 set for debugging\n" + STEPS
B["RUN261"] = """Traceback (most recent call last):
  File "/workspace/train.py", line 12, in <module>
    torch.cuda.set_device(local_rank)
RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.
"""
G["RUN261"] = "Driver Version: 550.90.07    CUDA Version: 12.4\n"
B["RUN262"] = """Traceback (most recent call last):
  File "/workspace/train.py", line 12, in <module>
    torch.cuda.set_device(local_rank)
RuntimeError: CUDA error: no CUDA-capable device is detected
"""
G["RUN262"] = "visible GPUs: 8\n" + STEPS
B["RUN263"] = """Traceback (most recent call last):
  File "/workspace/train.py", line 2, in <module>
    import torch
OSError: libcudart.so.12: cannot open shared object file: No such file or directory
"""
G["RUN263"] = INFO
B["RUN264"] = """[rank9]: Traceback (most recent call last):
[rank9]:   File "/workspace/train.py", line 12, in <module>
[rank9]:     torch.cuda.set_device(local_rank)
[rank9]: RuntimeError: CUDA error: invalid device ordinal
[rank9]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""
G["RUN264"] = "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 LOCAL_RANK=7\n" + STEPS

root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "codes")
for code in B:
    os.makedirs(f"{root}/{code}", exist_ok=True)
    for kind, text in (("bad", B[code]), ("good", G[code])):
        with open(f"{root}/{code}/{kind}.log", "w") as fh:
            fh.write(text)
print(len(B))
