"""Families of u3's session (issue 26), each read at its source and pinned with the threads' real lines:

- torch.distributed.pipelining's stage_backward (extract_tensors_with_grads: the len/keys asserts, "grad_value
  expected to have type", "Expected Tensor or None gradient"), autograd's "Mismatch in shape: grad_output[i]"
  cut mid-message under a pipeline engine, and DeepSpeed's last-stage loss (loss_fn(outputs, labels)) failing
  a shape check or cut in broadcast_tensors: RUN513;
- NCCL's COLL trace lines (opCount/count/datatype/root) of one communicator that disagree across processes,
  and a one-line title naming uneven batches across ranks or a hang for certain batch sizes: RUN201;
- a traceback cut at torch.multiprocessing.spawn's raise of ProcessExitedException: RUN133;
- a torchrun / launch --use_env command starting several workers per node with a fixed --local_rank: RUN193;
- a one-line title naming a failing GPU: RUN565.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

# https://github.com/pytorch/pytorch/issues/129732 (rank 0's traceback flattened onto a few lines)
PIPPY_ASSERT = """[rank0]: Traceback (most recent call last): [rank0]: File "/home/project/lib/python3.10/site-packages/torch/distributed/pipelining/_backward.py", line 66, in stage_backward [rank0]: extract_tensors_with_grads(stage_output, output_grads) [rank0]: File "/home/project/lib/python3.10/site-packages/torch/distributed/pipelining/_backward.py", line 52, in extract_tensors_with_grads [rank0]: assert len(output_val) == len(grad_val)
[rank0]: AssertionError [rank0]: The above exception was the direct cause of the following exception:
[rank0]: Traceback (most recent call last): [rank0]: File "/home/SimValidation/pipe/pygpt2-training-profiler_singleBatch_pipev2.py", line 182, in <module>
[rank0]: File "/home/project/lib/python3.10/site-packages/torch/distributed/pipelining/schedules.py", line 341, in step
"""
PIPPY_TYPE = """  File "/usr/lib/python3.11/site-packages/torch/distributed/pipelining/_backward.py", line 68, in stage_backward
    extract_tensors_with_grads(
  File "/usr/lib/python3.11/site-packages/torch/distributed/pipelining/_backward.py", line 54, in extract_tensors_with_grads
    assert isinstance(grad_val, (tuple, list)), (
AssertionError: grad_value expected to have type <class 'tuple'> but got <class 'torch.Tensor'>
"""
# https://github.com/deepspeedai/DeepSpeedExamples/issues/790 (the RuntimeError cut mid-message)
DS_GRAD_CUT = """  File "/home/sun/apps/miniconda3/envs/deepspeed/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 735, in _exec_backward_pass
    torch.autograd.backward(tensors=(outputs, ), grad_tensors=(grad_tensors, ))
  File "/home/sun/apps/miniconda3/envs/deepspeed/lib/python3.10/site-packages/torch/autograd/__init__.py", line 68, in _make_grads
    raise RuntimeError("Mismatch in shape: grad_output["
RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([8, 4096]) and output[0] h
"""
# https://github.com/deepspeedai/DeepSpeed/issues/5729 (the traceback cut mid-identifier)
DS_LOSS_CUT = """  File "/root/.local/lib/python3.8/site-packages/deepspeed/runtime/pipe/engine.py", line 759, in _exec_forward_pass
    self.loss = self.module.loss_fn(outputs, labels)
  File "train.py", line 39, in loss_fn
    return torch.nn.functional.mse_loss(output, label)
  File "/root/.local/lib/python3.8/site-packages/torch/nn/functional.py", line 3291, in mse_loss
    expanded_input, expanded_target = torch.broadcast_te
"""
DS_LOSS_FULL = """  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/pipe/engine.py", line 771, in _exec_forward_pass
    self.loss = self.module.loss_fn(outputs, labels)
  File "/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py", line 3053, in cross_entropy
    return torch._C._nn.cross_entropy_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index)
ValueError: Expected input batch_size (8) to match target batch_size (4).
"""


@pytest.mark.parametrize("log", [PIPPY_ASSERT, PIPPY_TYPE, DS_GRAD_CUT, DS_LOSS_CUT, DS_LOSS_FULL])
def test_pipeline_stages_that_disagree(log: str) -> None:
    _check(log, "RUN513")


# https://github.com/NVIDIA/nccl/issues/147 (a grep over per-rank files, quoted by the maintainer)
NCCL_COLL = """LOG1.0.txt:learnfair062:32615:32615 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f88e4000000 recvbuff 0x7f88e4000000 count 25503912 datatype 6 op 0 root 0 comm 0x7f88e005a260 [nranks=8] stream 0x55f20d2f5db0
LOG1.1.txt:learnfair062:32617:32617 [1] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f3bfe7f5400 recvbuff 0x7f3bfe7f5400 count 53 datatype 4 op 0 root 0 comm 0x7f3bf405a260 [nranks=8] stream 0x55d5ffb73110
LOG1.2.txt:learnfair062:32619:32619 [2] NCCL INFO Broadcast: opCount 0 sendbuff 0x7fc1407f5400 recvbuff 0x7fc1407f5400 count 53 datatype 4 op 0 root 0 comm 0x7fc13805a260 [nranks=8] stream 0x55cefcc3b0e0
"""
# The same trace of a healthy job: every process's opCount 1a agrees; two communicators in one process
# (the same opCount twice) are not paired.
NCCL_COLL_HEALTHY = """node1:101:101 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f0000 recvbuff 0x7f0000 count 1024 datatype 7 op 0 root 0 comm 0x55a1 [nranks=2] stream 0x55b1
node1:102:102 [1] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f1000 recvbuff 0x7f1000 count 1024 datatype 7 op 0 root 0 comm 0x55a2 [nranks=2] stream 0x55b2
"""
NCCL_COLL_TWO_COMMS = """node1:101:101 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f0000 recvbuff 0x7f0000 count 1024 datatype 7 op 0 root 0 comm 0x55a1 [nranks=2] stream 0x55b1
node1:101:101 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f2000 recvbuff 0x7f2000 count 8 datatype 4 op 0 root 0 comm 0x55a3 [nranks=2] stream 0x55b1
node1:102:102 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f1000 recvbuff 0x7f1000 count 1024 datatype 7 op 0 root 0 comm 0x55a2 [nranks=2] stream 0x55b2
"""


# A later collective that disagrees, read from the communicator's first one (the scanner stops only at
# "opCount 0 ": the trace repeats per collective and rank).
NCCL_COLL_LATER = """n1:11:11 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 root 0 comm 0x5 [nranks=2] stream 0x5
n1:12:12 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 root 0 comm 0x6 [nranks=2] stream 0x5
n1:11:11 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 root 0 comm 0x5 [nranks=2] stream 0x5
n1:12:12 [1] NCCL INFO Broadcast: opCount 1 sendbuff 0x1 recvbuff 0x1 count 99 datatype 7 op 0 root 0 comm 0x6 [nranks=2] stream 0x5
"""


@pytest.mark.parametrize(("log", "seq", "nranks"), [(NCCL_COLL, "0", 8), (NCCL_COLL_LATER, "1", 2)])
def test_nccl_coll_trace_mismatch(log: str, seq: str, nranks: int) -> None:
    _check(log, "RUN201", {"kind": "nccl_coll_trace_mismatch", "op_count": seq, "nranks": nranks})


@pytest.mark.parametrize(
    "title",
    [
        # https://github.com/dmlc/dgl/issues/2539
        "Current Node/EdgeDataLoader usage in examples may yield different number of batches per epoch for "
        "multiple GPUs.",
        # https://github.com/apache/mxnet/issues/7888
        "Distributed multi-GPU training -- hangs for certain batch_size, epoch_number combinations.",
        "DDP deadlock: uneven batches across ranks",
    ],
)
def test_uneven_batches_titles(title: str) -> None:
    _check(title + "\n", "RUN201", {"kind": "uneven_inputs"})


# https://github.com/Lightning-AI/pytorch-lightning/issues/16475 (IPython's traceback, cut in the signal branch)
SPAWN_SIGNAL_CUT = """File ~/anaconda3/lib/python3.8/site-packages/torch/multiprocessing/spawn.py:198, in start_processes(fn, args, nprocs, join, daemon, start_method)
    197 # Loop on join until it returns True or raises an exception.
--> 198 while not context.join():
    199     pass

File ~/anaconda3/lib/python3.8/site-packages/torch/multiprocessing/spawn.py:140, in ProcessContext.join(self, timeout)
    138 if exitcode < 0:
    139     name = signal.Signals(-exitcode).name
--> 140     raise ProcessExitedException(
    141         "process %d terminated with signal %s" %
    142         (error_index, name),
"""
SPAWN_PLAIN_CUT = """  File "/usr/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 160, in join
    raise ProcessExitedException(
"""


@pytest.mark.parametrize(("log", "signal"), [(SPAWN_SIGNAL_CUT, True), (SPAWN_PLAIN_CUT, False)])
def test_spawn_raise_cut_before_its_message(log: str, signal: bool) -> None:
    _check(log, "RUN133", {"kind": "child_exited", "signal_branch": signal})


def test_spawn_message_present_is_the_launcher_row() -> None:
    log = (
        SPAWN_PLAIN_CUT
        + "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGSEGV\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN131", root


# https://github.com/microsoft/Swin-Transformer/issues/158
SWIN_LAUNCH = """CUDA_VISIBLE_DEVICES=0,1,2,3 python -m torch.distributed.launch --nproc_per_node=4 --use_env  --master_port 12345 \\
    main.py --local_rank 0 \\
    --data-path <path> \\
    --cfg configs/swin_tiny_patch4_window7_224.yaml
INFO number of params: 28288354
INFO Start training
"""


@pytest.mark.parametrize(
    "log",
    [
        SWIN_LAUNCH,
        "torchrun --nproc_per_node=8 train.py --local-rank=0 --epochs 3\n",
        "python -m torch.distributed.run --nproc-per-node 2 tools/train.py --local_rank 1\n",
    ],
)
def test_launch_command_pins_one_local_rank(log: str) -> None:
    _check(log, "RUN193", {"kind": "pinned_local_rank"})


@pytest.mark.parametrize(
    "title",
    [
        # https://github.com/awslabs/awsome-distributed-ai/issues/201
        "One of the cluster GPUs is failing, it seems.",
        "GPU 3 died during training on node-7",
        "faulty GPU on one node of the cluster",
    ],
)
def test_gpu_named_as_failing(title: str) -> None:
    _check(title + "\n", "RUN565")


@pytest.mark.parametrize(
    "log",
    [
        NCCL_COLL_HEALTHY,
        NCCL_COLL_TWO_COMMS,
        # the launcher appends its own --local_rank=N after the script's (no --use_env)
        "python -m torch.distributed.launch --nproc_per_node=4 main.py --local_rank 0\n",
        "torchrun --nproc_per_node=1 train.py --local_rank 0\n",
        "torchrun --nproc_per_node=8 train.py --local_rank=$LOCAL_RANK\n",
        # a traceback through the pipeline engine's loss that goes on past broadcast_tensors
        DS_LOSS_CUT
        + '  File "/x/torch/functional.py", line 74, in broadcast_tensors\n    return _VF.broadcast_tensors(tensors)\n',
        "Bad GPU utilization with DDP on 8 GPUs",
        "How to detect a bad GPU?",
        "gpu is failing to allocate memory",
        "Training hangs after the first epoch",
        "number of batches per epoch: 1713",
        # a multi-line log that says different numbers of batches (only a one-line title is read)
        "epoch 1 done\nranks may get a different number of batches per GPU when drop_last=False\nepoch 2 done",
    ],
)
def test_near_misses_stay_silent(log: str) -> None:
    assert _root(log) is None, _root(log)
