"""r5's source sweep (2026-12-07): the messages that say ranks disagree or a collective was called wrongly, in
every layer, rendered as real logs show them, with the class an engineer would name: collective_mismatch (the
ranks disagree), nccl_usage (the call itself is wrong on every rank), or silence (no failure, or too little alone).

Sources read: c10d's argument checks (Utils.hpp check_* helpers, the all_to_all split checks, ProcessGroupNCCL's
and ProcessGroupGloo's tensor, list, root, tag and reduce_scatter checks, 1.x-2.13: the strings of torch 2.13's
libtorch_cpu and the 1.x wordings the rules already name), distributed_c10d.py's ValueErrors / RuntimeErrors /
TypeErrors (groups, backends, p2p ops, object collectives, subgroups), ProcessGroupWrapper's "Detected mismatch
between collectives on ranks" in its 1.10 ("inconsistent collective") and 2.x fingerprint shapes and its
monitored barrier, DDP's reducer.cpp / logger.cpp / distributed.py (unused parameters in every version's words,
marked ready twice, the model check across ranks, the bucket checks, static graph, join), FSDP's exec-order,
optimizer-state, flat-parameter and state-dict checks (_exec_order_utils.py, _optim_utils.py, _flat_param.py,
_state_dict_utils.py), DeepSpeed ZeRO-3's coordinator and ZeRO's gradient partition, Megatron-LM's pipeline
schedule and p2p (schedules.py, p2p_communication.py), torch/csrc/cuda/comm.cpp (DataParallel's
broadcast_coalesced).
Messages read: about 230 rendered lines; kept here 165 whose wording the sources print (140 failures, 25 no
failure); the rest were guesses at wordings the sources do not print, left out. Before the sweep's rows 13 of the
140 failures were silent (ProcessGroupGloo's list-size, tag and reduce_scatter checks, reducer.cpp's bucket
checks, FSDP's flat-parameter and state-dict-type checks, comm.cpp's devices[0] check, Megatron's schedule
checks); after: 0. None of the 25 benign lines fires.

Families added (rows in existing modules, existing code RUN301 c10d invalid usage, category nccl_usage):
- ProcessGroupGloo's own argument checks beyond invalidArgument's prefix words: "Incorrect output/input list
  size N. Output/Input list size should be M.", "Tag must be nonnegative", "reduce_scatter only supports 1
  output", the TORCH_CHECK_EQs "Check failed: outputShape[0] * worldSize == inputShape[0] (8 vs. 16)"
  (c10d_usage.py, arguments);
- reducer.cpp initialize_buckets: a bucket's parameters on several devices or dtypes, sparse-gradient
  parameters bucketed with others (c10d_usage.py, ddp);
- nn.DataParallel's replicate through torch.cuda.comm.broadcast_coalesced: "all tensors must be on devices[0]"
  (c10d_usage.py, dataparallel);
- Megatron-LM's schedule and p2p checks: "number of microbatches (6) is not divisible by
  pipeline-model-parallel-size (4)", "tensor_shape must be specified if recv_prev is True" (c10d_usage.py,
  pipeline);
- FSDP's flat-parameter and state-dict checks: "Must flatten tensors with uniform `requires_grad` when
  `use_orig_params=False`", "... on the same device", "All FSDP modules should have the same
  state_dict_type." (fsdp_usage.py, flat).

And one row on an existing code, RUN193 (two ranks of one communicator on one GPU, nccl_usage), in
device_comm_faults.py: NCCL's own communicator records (init.cc "comm 0x.. rank R nranks N cudaDev D [nvmlDev D]
busId B [commId C] - Init/Abort/Destroy COMPLETE", 2.4-2.29) read around an aborted communicator: two processes of
one host that put different ranks of one communicator on one bus id ran on one GPU.

Left silent (no class fits what the line alone says): a checkpoint saved at another world size (DeepSpeed's "The
checkpoint being loaded used a DP world size of 8 but the current world size is 4", FSDP's "size mismatch for
_fsdp_wrapped_module._flat_param" on load), autograd's generic "The size of tensor a (4096) must match ...".
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LINE_PREFIXES, root_category, root_finding

# (message as a log shows it, the class it must get)
FAILURES: list[tuple[str, object]] = [
    ("RuntimeError: Tensors must be CUDA and dense", "nccl_usage"),
    ("RuntimeError: Tensors must be contiguous", "nccl_usage"),
    ("ValueError: Tensors must be contiguous", "nccl_usage"),
    ("RuntimeError: Tensors must be on distinct GPU devices", "nccl_usage"),
    ("RuntimeError: Tensor list must be nonempty", "nccl_usage"),
    ("RuntimeError: Invalid function argument: Tensor list must be nonempty", "nccl_usage"),
    (
        "RuntimeError: Tensor list input to scatter/gather must match number of collective participants but got 2 inputs with world_size 4.",
        "nccl_usage",
    ),
    ("RuntimeError: Tensor list operands to scatter/gather must have the same length", "nccl_usage"),
    ("RuntimeError: Tensors must be non-overlapping and dense", "nccl_usage"),
    (
        "RuntimeError: All tensor operands to scatter/gather must have the same number of elements",
        "nccl_usage",
    ),
    ("RuntimeError: All tensor operands to scatter/gather must have the same size", "nccl_usage"),
    ("RuntimeError: Tensors must be on the same device", "nccl_usage"),
    ("RuntimeError: ProcessGroupNCCL::alltoall: Tensors must be on the same device", "nccl_usage"),
    (
        "RuntimeError: ProcessGroupNCCL does not support reduce_scatter on tensors with mismatched shapes",
        "nccl_usage",
    ),
    ("RuntimeError: ProcessGroupNCCL does not support allreduce on sparse tensors", "nccl_usage"),
    ("RuntimeError: output tensor must have the same type as input tensor", "nccl_usage"),
    ("RuntimeError: output tensor size must be equal to world_size times input tensor size", "nccl_usage"),
    ("RuntimeError: input tensor must be the same type as the output tensor", "nccl_usage"),
    ("RuntimeError: input tensor must be the same size as output size times world size", "nccl_usage"),
    (
        "RuntimeError: Tensor input and output of _allgather_base must have the same number of elements",
        "nccl_usage",
    ),
    (
        "RuntimeError: Tensor input and output of _reduce_scatter_base must have the same number of elements",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupNCCL::reduce_scatter: Invalid function argument: output tensor must have the same type as input tensor",
        "nccl_usage",
    ),
    ("RuntimeError: Unconvertible NCCL type", "nccl_usage"),
    ("RuntimeError: Unsupported ReduceOp for NCCL: AVG", "nccl_usage"),
    ("RuntimeError: Cannot use ReduceOp.BAND with NCCL", "nccl_usage"),
    ("RuntimeError: Cannot use ReduceOp.PREMUL_SUM with Gloo", "nccl_usage"),
    ("RuntimeError: Float8_e4m3fn is not supported by NCCL version 2.18", "nccl_usage"),
    ("RuntimeError: Split sizes doesn't match total dim 0 size", "nccl_usage"),
    (
        "RuntimeError: ProcessGroupNCCL::alltoall_base: Split sizes doesn't match total dim 0 size",
        "nccl_usage",
    ),
    ("RuntimeError: Tensor's dim 0 does not divide equally across group size", "nccl_usage"),
    ("RuntimeError: Number of tensor splits not equal to group size", "nccl_usage"),
    ("RuntimeError: ProcessGroupGloo::allreduce: invalid tensor type", "nccl_usage"),
    (
        "RuntimeError: ProcessGroupGloo::allreduce: Invalid function argument: Tensor list must be nonempty",
        "nccl_usage",
    ),
    ("RuntimeError: ProcessGroupGloo::broadcast: invalid root rank: 5", "nccl_usage"),
    ("RuntimeError: ProcessGroupGloo::broadcast: invalid root tensor: 1", "nccl_usage"),
    ("RuntimeError: ProcessGroupGloo::reduce: invalid root rank: -1", "nccl_usage"),
    (
        "RuntimeError: ProcessGroupGloo::allgather: invalid tensor type: requires all tensors in input list to have the same type",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::scatter: requires a single-element input list containing a list with 4 tensors",
        "nccl_usage",
    ),
    ("RuntimeError: ProcessGroupGloo::gather: requires empty output on non-root", "nccl_usage"),
    ("RuntimeError: ProcessGroupGloo::allreduce: unsupported device type cuda", "nccl_usage"),
    ("RuntimeError: ProcessGroupGloo::send: Tensors must be contiguous", "nccl_usage"),
    (
        "RuntimeError: ProcessGroupGloo::allgather_coalesced: inputs and outputs have different types",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::alltoall: input tensor list size 3 does not match world size 4",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::alltoall: output tensor list size 3 does not match world size 4",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::allgather: invalid tensor size at index 1 (expected [10], got [5])",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::allgather: invalid tensor type at index 1 (expected Float, got Half)",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::reduce_scatter: invalid input tensor list size, must be world size",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::allgather: Incorrect output list size 3. Output list size should be 4.",
        "nccl_usage",
    ),
    (
        "RuntimeError: ProcessGroupGloo::scatter: Incorrect input list size 3. Input list size should be 4.",
        "nccl_usage",
    ),
    ("RuntimeError: Check failed: outputShape[0] * worldSize == inputShape[0] (8 vs. 16)", "nccl_usage"),
    ("RuntimeError: ProcessGroupGloo::recv: Tag must be nonnegative", "nccl_usage"),
    ("RuntimeError: No backend type associated with device type cpu", "nccl_usage"),
    ("ValueError: Invalid process group specified", "nccl_usage"),
    ("RuntimeError: Invalid process group specified", "nccl_usage"),
    ("ValueError: Invalid process group specified or has been destroyed.", "nccl_usage"),
    ("RuntimeError: The given group does not exist", "nccl_usage"),
    (
        "ValueError: Group <torch._C._distributed_c10d.ProcessGroup object at 0x7f3a8> is not registered, please create group with torch.distributed.new_group API",
        "nccl_usage",
    ),
    (
        "ValueError: Group rank 3 is not part of group <torch._C._distributed_c10d.ProcessGroup object at 0x7f3a8>",
        "nccl_usage",
    ),
    (
        "ValueError: Global rank 5 is not part of group <torch._C._distributed_c10d.ProcessGroup object at 0x7f3a8>",
        "nccl_usage",
    ),
    (
        "ValueError: Invalid destination rank: destination rank should not be the same as the rank of the current process.",
        "nccl_usage",
    ),
    (
        "ValueError: Invalid source rank: source rank should not be the same as the rank of the current process.",
        "nccl_usage",
    ),
    (
        "ValueError: Expected argument scatter_object_output_list to be a list of size at least 1.",
        "nccl_usage",
    ),
    ("ValueError: source rank must provide non-None scatter_object_input_list", "nccl_usage"),
    ("ValueError: Argument ``gather_list`` must be specified on destination rank.", "nccl_usage"),
    ("ValueError: Argument ``gather_list`` must NOT be specified on non-destination ranks.", "nccl_usage"),
    ("ValueError: Argument ``scatter_list`` must be specified on source rank.", "nccl_usage"),
    ("ValueError: Argument ``scatter_list`` must NOT be specified on non-source ranks.", "nccl_usage"),
    (
        "TypeError: Invalid function argument. Expected parameter `tensor_list` of type List[torch.Tensor] but got <class 'torch.Tensor'> instead.",
        "nccl_usage",
    ),
    (
        "TypeError: Invalid function argument. Expected parameter `tensor` of type torch.Tensor but got <class 'list'> instead.",
        "nccl_usage",
    ),
    ("ValueError: Invalid function argument: output_tensor_lists should be a list", "nccl_usage"),
    (
        "RuntimeError: Coalescing manager requires all collectives to be the same type, but got mixed types: {'all_reduce', 'all_gather_into_tensor'}",
        "nccl_usage",
    ),
    ("ValueError: All ops need to use the same group.", "nccl_usage"),
    (
        "RuntimeError: Invalid usage of tensors with different dtypes Found torch.float32 and  torch.float16",
        "nccl_usage",
    ),
    ("ValueError: all_reduce does not support ReduceOp.MAX on complex tensors", "nccl_usage"),
    (
        "ValueError: Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or ``torch.distributed.irecv``.",
        "nccl_usage",
    ),
    (
        "ValueError: Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.",
        "nccl_usage",
    ),
    ("RuntimeError: monitored_barrier is only implemented for GLOO backend.", "nccl_usage"),
    ("RuntimeError: trying to initialize the default process group twice!", "nccl_usage"),
    ("ValueError: trying to initialize the default process group twice!", "nccl_usage"),
    ("ValueError: Invalid backend: 'nccl2'", "nccl_usage"),
    ("ValueError: Unknown c10d backend type NCCLX", "nccl_usage"),
    (
        "ValueError: The specified group name has already been created, please use a different group name",
        "nccl_usage",
    ),
    (
        "RuntimeError: The new group's rank should be within the world_size set by init_process_group",
        "nccl_usage",
    ),
    (
        "ValueError: the new group's world size should be less or equal to the world size set by init_process_group",
        "nccl_usage",
    ),
    ("ValueError: ranks list must not contain duplicate entries, got [0, 0, 1]", "nccl_usage"),
    ("ValueError: Rank 1 has appeared in both subgroup [0, 1] and [1, 2]", "nccl_usage"),
    ("ValueError: The world size (6) must be divisible by 'group_size=4'", "nccl_usage"),
    (
        "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.",
        ("rendezvous", "nccl_usage"),
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "driver_env"),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "driver_env"),
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=23, OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=23, OpType=ALLREDUCE).",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running inconsistent collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=long int, device=cuda))",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=1210, OpType=_ALLGATHER_BASE, TensorShape=[6400], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=c10::BFloat16, device=cuda)), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1210, OpType=_ALLGATHER_BASE, TensorShape=[3200], TensorDtypes=BFloat16).Collectives differ in the following aspects: \t Tensor Tensor shapes: 6400vs 3200",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 3 is running collective: CollectiveFingerPrint(OpType=BARRIER), but Rank 0 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[2], TensorDtypes=Float).",
        "collective_mismatch",
    ),
    (
        "torch.distributed.DistBackendError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=5, OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=6, OpType=ALLGATHER).Collectives differ in the following aspects: \t Sequence number: 5vs 6",
        "collective_mismatch",
    ),
    (
        "[rank1]: torch.distributed.DistBackendError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long).Collectives differ in the following aspects: \t Op type: BROADCASTvs ALLGATHER",
        "collective_mismatch",
    ),
    (
        "  what():  Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=44, OpType=ALLREDUCE, TensorShape=[512], TensorDtypes=Float), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=44, OpType=ALLREDUCE, TensorShape=[256], TensorDtypes=Float).Collectives differ in the following aspects: \t Tensor Tensor shapes: 512vs 256",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Collectives differ in the following aspects: \t Tensor Tensor dtypes: Floatvs Half",
        "collective_mismatch",
    ),
    (
        "RuntimeError: ProcessGroupWrapper: Monitored Barrier encountered error running collective: CollectiveFingerPrint(SequenceNumber=9, OpType=ALLREDUCE, TensorShape=[1], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)). Error: \n Rank 1 failed to pass monitoredBarrier in 1800000 ms",
        ("collective_timeout", "collective_mismatch"),
    ),
    (
        "RuntimeError: Rank 1 failed to pass monitoredBarrier in 30000 ms",
        ("collective_timeout", "collective_mismatch"),
    ),
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing its output (the return value of `forward`). You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by (1) passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`; (2) making sure all `forward` function outputs participate in calculating loss.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` outputs participate in computing loss.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your training graph has changed in this iteration, e.g., one parameter is used in first iteration, but then got unused in the second iteration. this is not compatible with static_graph set to True.",
        "collective_mismatch",
    ),
    ("Parameter indices which did not receive grad for rank 1: 122 123 124 125", "collective_mismatch"),
    ("Parameters which did not receive grad for rank 0: model.lm_head.weight", "collective_mismatch"),
    (
        "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in first iteration, but then got used in the second iteration. this is not compatible with static_graph set to True.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Parameter at index 127 has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Parameter at index 127 with name module.decoder.weight has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: DDP expects same model across all ranks, but Rank 1 has 200 params, while rank 0 has inconsistent 198 params.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 18 params, while rank 3 has inconsistent 0 params. That means Rank 0's model will not be synchronized.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: params[0] in this process with sizes [64, 3, 7, 7] appears not to match sizes of the same param in process 0.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: [1]: params[0] in this process with sizes [64, 3, 7, 7] appears not to match sizes of the same param in process 0.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Detected at least one rank that exhausted inputs. Throwing across all ranks.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Modules with uninitialized parameters can't be used with `DistributedDataParallel`. Run a dummy forward pass to correctly initialize the modules",
        "nccl_usage",
    ),
    (
        "RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.",
        "nccl_usage",
    ),
    (
        "AssertionError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.",
        "nccl_usage",
    ),
    (
        "ValueError: DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device 0, and module parameters {device(type='cpu')}.",
        "nccl_usage",
    ),
    (
        "RuntimeError: Detected at least one parameter gradient is not the expected DDP bucket view with gradient_as_bucket_view=True. This may happen (for example) if multiple allreduce hooks were registered onto the same parameter.",
        "nccl_usage",
    ),
    ("RuntimeError: All parameters in a bucket must be placed on the same device.", "nccl_usage"),
    ("RuntimeError: All parameters in a bucket must have the same dtype.", "nccl_usage"),
    (
        "RuntimeError: Buckets with more than one variable cannot include variables that expect a sparse gradient.",
        "nccl_usage",
    ),
    ("RuntimeError: all tensors must be on devices[0]", "nccl_usage"),
    ("RuntimeError: All tensors must be on devices[0]: 0", "nccl_usage"),
    (
        "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering 5 parameters while rank 1 is all-gathering 6 parameters",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering parameters for ['layer1.weight'] while rank 1 is all-gathering parameters for ['layer2.weight']",
        "collective_mismatch",
    ),
    (
        "UserWarning: Forward order differs from that of the first iteration on rank 0. Collectives are unchecked and may give incorrect results or hang.",
        "collective_mismatch",
    ),
    (
        "AssertionError: Rank 1 has different values for step: tensor(8016.). Other ranks: tensor(7870.)",
        "collective_mismatch",
    ),
    (
        "ValueError: Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`",
        "nccl_usage",
    ),
    ("ValueError: Must flatten tensors on the same device but got both cuda:0 and cpu", "nccl_usage"),
    ("AssertionError: All FSDP modules should have the same state_dict_type.", "nccl_usage"),
    (
        "RuntimeError: FSDP does not support modules with different device types but got params on cuda and cpu",
        "nccl_usage",
    ),
    (
        "RuntimeError: still have inflight params [{'id': 0, 'status': 'INFLIGHT', 'numel': 4096, 'ds_numel': 4096, 'shape': (4096,), 'ds_shape': (4096,), 'requires_grad': True, 'grad_shape': None, 'persist': True, 'active_sub_modules': set()}]",
        "collective_mismatch",
    ),
    (
        "RuntimeError: tracing error at step 0: module id: 12, training: True expected the next 1 parameters in the parameter fetch queue to be ({'id': 30, 'status': 'AVAILABLE', 'numel': 1024, 'ds_numel': 1024},) but got ().",
        "collective_mismatch",
    ),
    (
        "AssertionError: The parameter 12 has already been reduced. Gradient computed twice for this partition. Multiple gradient reduction is currently not supported",
        "collective_mismatch",
    ),
    ("Invalidate trace cache @ step 0: expected module 1, but got module 0", "collective_mismatch"),
    (
        "RuntimeError: tensor_shape must be specified if recv_prev is True. Common tensor_shape is (seq_length, micro_batch_size, hidden_size)",
        "nccl_usage",
    ),
    (
        "RuntimeError: number of microbatches (6) is not divisible by pipeline-model-parallel-size (4) when using interleaved schedule",
        "nccl_usage",
    ),
]

# Lines a healthy or unrelated run prints, sharing the families' words: no finding.
SILENT: list[str] = [
    "[I reducer.cpp:1032] Reducer buckets have been rebuilt in this iteration.",
    "I1203 12:00:00.123 139 reducer.cpp:1400] Reducer buckets have been rebuilt in this iteration.",
    "INFO:torch.nn.parallel.distributed:Reducer buckets have been rebuilt in this iteration.",
    "2021-11-10 15:40:35,835 - mmcv - INFO - Reducer buckets have been rebuilt in this iteration.",
    "[I reducer.cpp:1315] Reducer: Bucket rebuilt with the bucket size limit: 26214400",
    "[W reducer.cpp:1298] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration,  which can adversely affect performance. (function operator())",
    "[W reducer.cpp:346] Warning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.",
    "UserWarning: You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` will detect unused parameters automatically, so you do not need to set find_unused_parameters=true, just be sure these unused parameters will not change during training loop while calling `_set_static_graph`.",
    "[W logger.cpp:322] Warning: Time stats are currently only collected for CPU and CUDA devices. Please refer to CpuTimer or CudaTimer for how to register timer for other device type.",
    "[I logger.cpp:363] [Rank 0]: DDP Initialized with: broadcast_buffers: 1 bucket_cap_bytes: 26214400 find_unused_parameters: 0 gradient_as_bucket_view: 0 has_sync_bn: 0 is_multi_device_module: 0 iteration: 0 num_parameter_tensors: 161 output_device: 0 rank: 0 total_parameter_size_bytes: 102228128 world_size: 8 backend_name: nccl",
    "[W ProcessGroupNCCL.cpp:2300] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect for point-to-point collectives.",
    "[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a particular device.",
    "[rank0]:[W1203 ProcessGroupNCCL.cpp:4454] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a particular device,or call init_process_group() with a device_id.",
    "UserWarning: barrier(): using the device under current context. You can specify `device_id` in `init_process_group` to mute this warning.",
    "[I ProcessGroupNCCL.cpp:751] [Rank 0] ProcessGroupNCCL initialized with following options:",
    "INFO:torch.distributed.distributed_c10d:Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.",
    "[W ProcessGroupGloo.cpp:694] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())",
    "[I ProcessGroupWrapper.cpp:562] [Rank 1] Running collective: CollectiveFingerPrint(SequenceNumber=1275, OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda))",
    "[rank2]:[I1112 08:46:17.749683781 ProcessGroupWrapper.cpp:587] [Rank 2] Running collective: CollectiveFingerPrint(SequenceNumber=7133, OpType=_ALLGATHER_BASE, TensorShape=[9699328], TensorDtypes=BFloat16)",
    "[2024-01-01 00:00:00,000] [INFO] [stage3.py:123:__init__] Reduce bucket size 500000000",
    "[2024-01-01 00:00:00,000] [INFO] [partition_parameters.py:343:__exit__] finished initializing model - num_params = 291, num_elems = 6.74B",
    "[2024-01-01 00:00:00,000] [INFO] [utils.py:800:see_memory_usage] Stage 3 initialize beginning",
    "UserWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict(), which can support different parallelisms, FSDP1, FSDP2, DDP.",
    " > number of parameters on (tensor, pipeline) model parallel rank (0, 1): 1234567",
    "UserWarning: Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated",
]


@pytest.mark.parametrize("line,want", FAILURES)
def test_sweep_failures_get_their_class(line: str, want: object) -> None:
    got = root_category(line)
    assert got in (want if isinstance(want, tuple) else (want,)), (line, got)


@pytest.mark.parametrize("line", SILENT)
def test_sweep_benign_lines_stay_silent(line: str) -> None:
    assert root_category(line) is None, line


_NEW = [
    "RuntimeError: ProcessGroupGloo::allgather: Incorrect output list size 3. Output list size should be 4.",
    "RuntimeError: ProcessGroupGloo::scatter: Incorrect input list size 3. Input list size should be 4.",
    "RuntimeError: ProcessGroupGloo::recv: Tag must be nonnegative",
    "RuntimeError: Check failed: outputShape[0] * worldSize == inputShape[0] (8 vs. 16)",
    "RuntimeError: All parameters in a bucket must be placed on the same device.",
    "RuntimeError: All parameters in a bucket must have the same dtype.",
    "RuntimeError: Buckets with more than one variable cannot include variables that expect a sparse gradient.",
    "RuntimeError: all tensors must be on devices[0]",
    "RuntimeError: number of microbatches (6) is not divisible by pipeline-model-parallel-size (4) when using "
    "interleaved schedule",
    "RuntimeError: tensor_shape must be specified if recv_next is True. Common tensor_shape is (seq_length, "
    "micro_batch_size, hidden_size)",
    "ValueError: Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`",
    "ValueError: Must flatten tensors on the same device but got both cuda:0 and cpu",
    "AssertionError: All FSDP modules should have the same state_dict_type.",
]


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize("line", _NEW)
def test_new_family_rows_behind_every_prefix(prefix: str, line: str) -> None:
    f = root_finding(prefix + line)
    assert f is not None and f.code == "RUN301", (prefix + line, f)


# Near-misses: healthy or unrelated lines that share the new rows' words.
_NEAR = [
    "[INFO] collate: output list size 4, input list size 4 (world size 4)",
    "wandb: tag must be set before the run starts, using default",
    "All parameters in a bucket are on cuda:0 (26214400 bytes)",
    "DataParallel: replicating the module from devices[0]=cuda:0 to 4 devices",
    " > setting number of microbatches to constant 8",
    "INFO: tensor_shape (4096, 1, 1024) for p2p communication",
    "INFO: FSDP will flatten tensors of each wrapped module into one FlatParameter",
    "All FSDP modules use state_dict_type FULL_STATE_DICT",
    '    raise RuntimeError("all tensors must be on devices[0]")',
    '    raise ValueError("Must flatten tensors on the same device but got both "',
]


@pytest.mark.parametrize("line", _NEAR)
def test_new_rows_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line) is None, line


def test_dataparallel_replicate_traceback() -> None:
    # nn.DataParallel whose module is not on device_ids[0] (the released v17d case's shape)
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    outputs = model(inputs)\n"
        '  File "/usr/lib/python3.6/site-packages/torch/nn/parallel/replicate.py", line 67, in '
        "_broadcast_coalesced_reshape\n"
        "    return comm.broadcast_coalesced(tensors, devices)\n"
        '  File "/usr/lib/python3.6/site-packages/torch/cuda/comm.py", line 39, in broadcast_coalesced\n'
        "    return torch._C._broadcast_coalesced(tensors, devices, buffer_size)\n"
        "RuntimeError: all tensors must be on devices[0]"
    )
    f = root_finding(log)
    assert f is not None and f.code == "RUN301" and f.facts.get("usage_check") == "dataparallel", f


def test_gloo_list_size_names_the_collective() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/torch/distributed/distributed_c10d.py", line 2830, in all_gather\n'
        "    work = group.allgather([tensor_list], [tensor])\n"
        "RuntimeError: ProcessGroupGloo::allgather: Incorrect output list size 3. Output list size should be 4."
    )
    f = root_finding(log)
    assert f is not None and f.code == "RUN301" and f.facts.get("op") == "all_gather", f


# NCCL's communicator records (init.cc, 2.4-2.18 and 2.19+ with nvmlDev / commId): two processes of one host
# whose aborted communicator puts different ranks on one bus id ran on one GPU.
_ONE_GPU = (
    "d-9-11-1:2870757:2870757 [0] NCCL INFO comm 0x560c6a8aafd0 rank 0 nranks 2 cudaDev 0 busId 86000 - Abort COMPLETE\n"
    "d-9-11-1:2870756:2870756 [0] NCCL INFO comm 0x55592676f080 rank 1 nranks 2 cudaDev 0 busId 86000 - Abort COMPLETE\n"
    "Traceback (most recent call last):\n"
    '  File "multi_tutorial.py", line 39, in __init__\n'
    "    self.model = DDP(self.model, device_ids=[self.local_rank])\n"
)


def test_aborted_communicator_with_two_ranks_on_one_bus_id() -> None:
    f = root_finding(_ONE_GPU)
    assert f is not None and f.code == "RUN193" and f.facts.get("ranks") == [0, 1], f


def test_aborted_communicator_newer_records() -> None:
    log = (
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x3587 - Init COMPLETE\n"
        "n1:101:201 [0] NCCL INFO comm 0x55f2 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x3587 - Init COMPLETE\n"
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Abort COMPLETE\n"
    )
    f = root_finding(log)
    assert f is not None and f.code == "RUN193", f


@pytest.mark.parametrize(
    "log",
    [
        # two GPUs: two bus ids
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Abort COMPLETE\n"
        "n1:101:201 [1] NCCL INFO comm 0x55f2 rank 1 nranks 2 cudaDev 1 busId 3d000 - Abort COMPLETE\n",
        # one bus id on two hosts: two machines' first GPU
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Abort COMPLETE\n"
        "n2:100:200 [0] NCCL INFO comm 0x55f2 rank 1 nranks 2 cudaDev 0 busId 1b000 - Abort COMPLETE\n",
        # colocated processes in different communicators (commIds differ)
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x1 - Abort COMPLETE\n"
        "n1:101:201 [0] NCCL INFO comm 0x55f2 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x2 - Abort COMPLETE\n",
        # healthy: the communicators came up and were destroyed, none aborted
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE\n"
        "n1:101:201 [1] NCCL INFO comm 0x55f2 rank 1 nranks 2 cudaDev 1 busId 3d000 - Init COMPLETE\n"
        "n1:100:200 [0] NCCL INFO comm 0x55f1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Destroy COMPLETE\n",
    ],
)
def test_communicator_records_near_misses(log: str) -> None:
    f = root_finding(log)
    assert f is None or f.code != "RUN193", f
