"""c10d usage: torch.distributed's own checks of how the program calls it (RUN301), before any
backend runs: the process group, the backend string, the device binding, the arguments of a
collective or an object collective, and the ranks of a subgroup.

Read at their sources, 1.x to 2.x, as the exceptions they raise (ValueError / RuntimeError / TypeError
/ AssertionError / NotImplementedError, and DistBackendError from C++), behind whatever prefix the
launcher or a framework adds ("[rank3]: ", "(RayWorkerWrapper pid=..) ERROR ...] ",
"ray.exceptions.RayTaskError(ValueError): ", DeepSpeed's and Accelerate's re-raised tracebacks):

- torch/distributed/distributed_c10d.py: the group ("Invalid process group specified" since 1.0,
  RuntimeError in 1.x and ValueError in 2.x, "... or has been destroyed." since 2.2; 1.x "The given
  group does not exist", "The global rank 3 is not part of the group ...", "group.WORLD does not have
  local rank to global rank mapping"; 2.x "Group <...> is not registered, please create group with
  torch.distributed.new_group API", "Global rank 5 is not part of group ...", "Expecting a
  ProcessGroup, but got a <class 'int'>.", "trying to initialize the default process group twice!",
  "The specified group name has already been created"); the backend ("Invalid backend: 'ncl'" 1.x,
  "Unknown backend 'ncl'. Specify a 'device:backend' string ..." 2.x, "Backend name must be a string",
  "Invalid device:backend pairing", "Duplicate device type cuda in backend string",
  "monitored_barrier is only implemented for GLOO backend.", "We detected accelerator xpu on your
  machine. But we don't know which communication backend to use", "Default backend not registered for
  device : cpu"); the device ("device_id cuda:9 is out of range", "Please use a device_id with
  index.", "Mismatched bound device between new pg and the default pg."); a collective's arguments
  ("Invalid function argument. Expected parameter `tensor` (to be) of type torch.Tensor", "Invalid
  destination rank: destination rank should not be the same as the rank of the current process.",
  "Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.", "All
  ops need to use the same group.", "Argument ``gather_list`` must be specified on destination rank.",
  "all_reduce does not support ReduceOp.MAX on complex tensors", "Coalescing manager requires all
  collectives to be the same type"); the object collectives ("Must provide object_gather_list on dst
  rank", "Expected argument scatter_object_output_list to be a list of size at least 1."); subgroups
  and splits ("The new group's rank should be within the the world_size set by init_process_group"
  1.x, "the new group's world size should be less or equal to the world size set by
  init_process_group", "The world size (8) must be divisible by 'group_size=3'", "Rank 2 has appeared in
  both subgroup [0, 2] and [1, 2]", "the split group cannot have duplicate ranks", "Cannot shrink a
  process group with size 1"); DistributedDataParallel's constructor checks in
  torch/nn/parallel/distributed.py ("DistributedDataParallel is not needed when a module doesn't have any
  parameter that requires a gradient.", "device_ids can only be None or contain a single element.",
  "DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-
  device GPU modules or CPU modules, but got device_ids [0], output_device 0, and module parameters
  {device(type='cpu')}.", "Modules with uninitialized parameters can't be used with
  `DistributedDataParallel`.", "SyncBatchNorm layers only work with GPU modules").
- c10d's C++ (ProcessGroup.hpp getBackend 2.0+: "No backend type associated with device type cpu" -
  a CPU tensor given to an NCCL-only group - and "Could not retrieve or create the backend 0 for device
  type cuda"; Utils.hpp's all-to-all split checks "Split sizes doesn't match total dim 0 size", "Tensor's
  dim 0 does not divide equally across group size", "Number of tensor splits not equal to group size";
  ProcessGroupNCCL's "Expecting one tensor only but got multiple. You are probably using multiple
  devices under one thread." and 1.x's "Not able to create/get the NCCL Communicator since the GPU
  devices are not known"; 2.3+ with device_id given to init_process_group, a tensor on another GPU:
  the LOG(ERROR) "Tensor found on device cuda:0 but backend constrained to cuda:1" and the exception
  "Attempt to perform collective on tensor not on device passed to init_process_group"; the
  Reducer's constructor before DDP's Python check existed, 1.0-1.4 AT_ASSERTM "replicas_[0].size() >= 1
  ASSERT FAILED at .../c10d/reducer.cpp:53, please report a bug to PyTorch. Expected at least one
  parameter." and 1.5-1.7 TORCH_CHECK "Expected at least one parameter." - a module without trainable
  parameters wrapped in DDP); fairscale's reduce-scatter bucketer (fairscale/utils/reduce_scatter_bucketer.py
  0.3-0.4, under its FSDP's post-backward hook): "AssertionError: reduce_scatter received 2 inputs, expected
  group.size() (8)"; Accelerate's
  verify_operation "One or more of the tensors passed to accelerate.utils.operations.gather were not on the
  cpu while the `Accelerator` is configured for cuda." (accelerate/utils/operations.py 0.34.2, 1.2.1);
  ProcessGroupGloo's list, tag and reduce_scatter checks ("Incorrect output list size 3. Output list size
  should be 4.", "Tag must be nonnegative", "Check failed: outputShape[0] * worldSize == inputShape[0] (8
  vs. 16)"), reducer.cpp's bucket checks ("All parameters in a bucket must be placed on the same device."),
  nn.DataParallel's replicate in torch/csrc/cuda/comm.cpp ("all tensors must be on devices[0]"), and
  Megatron-LM's schedule checks ("number of microbatches (6) is not divisible by
  pipeline-model-parallel-size (4)", "tensor_shape must be specified if recv_prev is True").

"Default process group has not been initialized" is the rendezvous module's (RUN224: nothing
initialised it), "Distributed package doesn't have NCCL built in" and "ProcessGroupNCCL is only
supported with GPUs" are the environment's (driver_env), and ProcessGroupNCCL's tensor checks ("Tensors
must be CUDA and dense") stay with NCCL usage (RUN191, nccl_errors).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_CHECKS = lazy_re.compile(
    r"(?P<group>Invalid process group specified|The given group does not exist|"
    r"Group .{1,200} is not registered, please create group with|"
    r"Process group .{1,200} is not initialized in the world group map|"
    r"Expecting a ProcessGroup, but got a|Expected ProcessGroup, got|"
    r"group\.WORLD does not have local rank to global rank mapping|"
    r"The (?:global|group) rank -?\d+ is not part of the group|"
    r"(?:Global|Group) rank -?\d+ is not part of (?:the parent )?group|"
    r"trying to initialize the default process group twice|"
    r"The specified group name has already been created|All ops need to use the same group)|"
    r"(?P<backend>Invalid backend: '|Unknown backend '|Backend name must be a string|"
    r"Backend constructor parameter must be string-ish|Invalid device:backend pairing|"
    r"Duplicate device type '?\w+'? in backend string|Unknown (?:c10d )?backend type|"
    r"No backend type associated with device type|Could not retrieve or create the backend|"
    r"Default backend not registered for device|is not present in the parent process group|"
    r"Backend mismatch for device '|But we don't know which communication backend to use|"
    r"monitored_barrier is only implemented for GLOO backend|"
    r"ProcessGroupWrapper unsupported without GLOO backend|"
    r"MPI backend doesn't support use_local_synchronization|"
    r"its backend does not support splitting|"
    r"Default device not found, because no backend has been registered|"
    r"No device associated with the default pg|"
    # 2.13 distributed_c10d._get_process_group_backend / ProcessGroup.hpp splitGroup
    r"Cannot access device backend for process group|"
    r"Requested device type for splitGroup is not present|splitGroup deviceTypes filter must include)|"
    r"(?P<device>device_id \S+ is out of range|device_id \S+ does not match the current compilation|"
    r"Please use a device_id with index|device_id parameter must be an accelerator with an index|"
    r"Mismatched bound device between new pg and the default pg|"
    r"does not match the default process group's bound_device_id|"
    r"Not able to create/get the NCCL Communicator since the (?:GPU )?devices are|"
    r"Expecting one tensor only but got multiple|"
    # 2.3+ getNCCLComm with device_id bound at init: the LOG(ERROR) line, then the exception
    r"Tensor found on device \S+ but backend constrained to \S+|"
    r"Attempt to perform collective on tensor not on device passed to init_process_group|"
    # Accelerate's verify_operation (accelerate/utils/operations.py 0.2x-1.2) before its gather/reduce/
    # broadcast: "DistributedOperationException: One or more of the tensors passed to
    # accelerate.utils.operations.gather were not on the cpu while the `Accelerator` is configured for cuda."
    r"One or more of the tensors passed to \S+ were not on the \w+ while the `Accelerator` is configured|"
    r"Default group size only takes effect when CUDA is available)|"
    r"(?P<arguments>Invalid function argument[.:] (?:Expected parameter `\w+`|output_tensor_lists)|"
    r"Invalid (?:destination|source|src|dst|peer) rank: \w+ rank should not be the same as the rank|"
    r"Invalid usage of tensors with different dtypes|Invalid ``op``|Invalid ``p2p_op_list``|"
    r"\w+ does not support \S+ on complex tensors|"
    # a reduce op the backend or the API lacks (ReduceOp.AVG, most often): torch's functional collectives
    # "all_reduce backward only supports 'sum' reduction, got 'avg'" (2.x), torch_xla's backend "ValueError:
    # Invalid reduce op <torch.distributed.distributed_c10d.ReduceOp object at 0x..>", oneCCL's "validate:
    # EXCEPTION: average operation is not supported for the scheduler path" (torch-xpu-ops)
    r"\w+ backward only supports '\w+' reduction, got '\w+'|Invalid reduce op <torch\.distributed\.|"
    r"average operation is not supported for the scheduler path|"
    r"Argument ``(?:gather|scatter)_list`` must (?:NOT )?be specified on|"
    r"Coalescing manager requires all collectives to be the same type|"
    r"ProcessGroup has non-empty op list at the start of coalescing|"
    r"Split sizes doesn't match total dim 0 size|"
    r"Tensor's dim 0 does not divide equally across group size|"
    r"Number of tensor splits not equal to group size|"
    r"Can't specify both group_rank and global_rank|Must specify global_rank or group_rank|"
    r"reduce_scatter received \d+ inputs, expected group\.size\(\)|"
    r"Illegal to call \w+ on IllegalWork object|"
    # ProcessGroupGloo.cpp / Work.cpp (2.13)
    r"ProcessGroupGloo::(?:send|recv|recvAnysource) takes a single tensor|"
    r"Work needs to be completed before calling result\(\)|"
    r"work result does not support list of lists|"
    r"Expected timeout argument to be of type datetime\.timedelta|"
    # ProcessGroupGloo.cpp's list and tag checks and its reduce_scatter TORCH_CHECK_EQs (2.x): "Incorrect
    # output list size 3. Output list size should be 4.", "Tag must be nonnegative", "Check failed:
    # outputShape[0] * worldSize == inputShape[0] (8 vs. 16)"
    r"Incorrect (?:output|input) list size -?\d+\. (?:Output|Input) list size should be|"
    r"Tag must be nonnegative|reduce_scatter only supports 1 output|"
    r"Check failed: output(?:Shape|Tensors|s)\[\w+\]\S* ?[*=]=? ?\S*(?:worldSize|input))|"
    r"(?P<object_collective>Must provide object_gather_list on dst rank|"
    r"Expected argument scatter_object_output_list to be a list of size at least 1|"
    r"source rank must provide non-None scatter_object_input_list)|"
    r"(?P<subgroup>The new group's rank should be within the (?:the )?world_size|"
    r"the new group's world size should be less or equal to the world size|"
    r"the split group(?:'s size should be (?:less|no larger)| cannot (?:be empty|have duplicate))|"
    r"Split ranks (?:cannot be empty|should not have duplicates)|"
    r"Rank -?\d+ at index \d+ is out of bounds for group size|"
    r"Duplicate rank -?\d+ found in ranks_to_exclude|"
    r"split_ranks cannot be None or empty|ranks list must not contain duplicate entries|"
    r"Rank -?\d+ is out of range\. Valid ranks are|The arg 'group_size' \(-?\d+\) must|"
    r"The world size \(\d+\) must be divisible by|The arg 'ranks_per_subgroup_list' cannot be empty|"
    r"Rank \d+ has appeared in both subgroup|Ranks length \(\d+\) must be divisible by stride|"
    r"rankset doesn't include the current node|Cannot automatically create PG with empty tag|"
    r"new_group cannot delegate to split_group|ranks_to_exclude (?:must|cannot)|"
    r"Cannot shrink a process group|Cannot exclude all \d+ ranks|"
    r"is in the exclusion list and should not call shrink_group|Invalid shrink_flags value)|"
    r"(?P<ddp>DistributedDataParallel is not needed when a module doesn't have any parameter|"
    r"replicas_\[0\]\.size\(\) >= 1 (?:INTERNAL )?ASSERT FAILED|"
    r"(?:(?<=Error: )|^)Expected at least one parameter\.|"
    r"device_ids can only be None or contain a single element|"
    r"DistributedDataParallel's input module must be on the same type of devices|"
    r"DistributedDataParallel device_ids and output_device arguments only work with|"
    r"Modules with uninitialized parameters can't be used with `DistributedDataParallel`|"
    r"DDP Pickling/Unpickling are only supported when using DDP with the default process group|"
    r"SyncBatchNorm layers only work with GPU modules|"
    r"Cannot specify both process_group and device_mesh arguments|"
    # reducer.cpp (2.x): two allreduce hooks on one parameter; 2.6+ compiled autograd with the C++ reducer
    r"Detected at least one parameter gradient is not the expected DDP bucket view|"
    r"Compiled autograd is not compatible with C\+\+ DDP Reducer|"
    # reducer.cpp initialize_buckets (1.x-2.x): one bucket's parameters on several devices or dtypes
    r"All parameters in a bucket must (?:be placed on the same device|have the same dtype)|"
    r"Buckets with more than one variable cannot include variables that expect a sparse gradient)|"
    # torch/csrc/cuda/comm.cpp broadcast_coalesced (nn.DataParallel's replicate, 1.x-2.x): the module's
    # parameters are not all on device_ids[0]
    # and nn.DataParallel's forward (torch/nn/parallel/data_parallel.py 1.0-2.x) before it replicates: "module
    # must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device:
    # cuda:1"
    r"(?P<dataparallel>[Aa]ll tensors must be on devices\[0\]|"
    r"module must have its parameters and buffers on device \S+ \(device_ids\[0\]\) but found)|"
    # torch/distributed/device_mesh.py (2.2-2.13): a mesh that does not fit the launched world
    r"(?P<mesh>Mesh should not be bigger than default world size|"
    r"DeviceMesh only support homogeneous hardware, but found|"
    r"Each device mesh dimension should get only one process group|"
    r"mesh_shape and mesh_dim_names should have same length|"
    r"Each mesh_dim_name must be unique|Expects mesh with ndim equal to number of ProcessGroups)|"
    # torch/distributed/pipelining (stage.py, schedules.py 2.4-2.13): stages and microbatches that do not fit
    r"(?P<pipeline>Pipeline group size \d+ cannot be larger than number of stages|"
    r"Number of microbatches \(\d+\) must be greater than or equal to the number of stages|"
    r"requires the number of microbatches to be a multiple of the number of rounds|"
    r"ZBV requires exactly 2 stages per rank|"
    r"DualPipeV requires at least as many microbatches as stages|"
    # Megatron-LM's pipeline schedules and p2p (megatron/core/pipeline_parallel/schedules.py,
    # p2p_communication.py): a schedule that cannot be run with these microbatches, or no receive shape
    r"number of microbatches \(\d+\) is not divisible by pipeline-(?:model-)?parallel-size|"
    r"tensor_shape must be specified if recv_(?:prev|next) is True)"
)
# The collective the program called: the last torch.distributed frame of the traceback above the error.
_FRAME = lazy_re.compile(
    r'File "[^"]*distributed[/\\](?:distributed_c10d|c10d_logger)\.py", line \d+, in (\w+)'
)
_SOURCE_LINE = lazy_re.compile(r"\braise \w+\(|\w\(f?[\"']")
_WRAPPERS = frozenset({"wrapper", "_wrapper", "inner", "_get_default_group", "_check_single_tensor"})

_WHAT = {
    "group": "a process group that does not fit (unknown, destroyed, initialised twice, or of other ranks)",
    "backend": "a backend or device type the process group does not have",
    "device": "a device binding that does not fit the process group",
    "arguments": "arguments of the wrong type, rank or shape",
    "object_collective": "an object collective without its list on the right rank",
    "subgroup": "subgroup ranks that do not fit the world",
    "ddp": "a DistributedDataParallel wrapping that does not fit the module (devices, parameters, group)",
    "mesh": "a DeviceMesh whose shape does not fit the launched world (its size, ranks per host, groups)",
    "pipeline": "a pipeline schedule whose stages or microbatches do not fit the ranks",
    "dataparallel": "nn.DataParallel's module is not on device_ids[0] (move it to cuda:<device_ids[0]> "
    "before wrapping)",
}


def traceback_op(hit: Hit) -> str:
    """The torch.distributed function the traceback shows (its last frame there, not a wrapper):
    above the exception line, or below it when the paste puts the message first."""
    for lines in (list(reversed(hit.before(16))), hit.after(16)):
        for ln in lines:
            m = _FRAME.search(ln.text)
            if m and m.group(1) not in _WRAPPERS and not m.group(1).startswith("_"):
                return m.group(1)
    return ""


# nn.DataParallel's check is the job's device binding only where the job is a distributed one: a rank's tag on
# the line, or a launcher's, DDP's or torch.distributed's words near it. Quoted alone (a thread's title) it is
# DataParallel in one process, which the released corpora label both ways (v14e-other_ambiguous-004,
# v21G-nccl_internal_or_invalid_usage-006): silent there.
_DISTRIBUTED_JOB = lazy_re.compile(
    r"torch[\\/.]distributed|DistributedDataParallel|init_process_group|torchrun|\blocal_rank\b|"
    r"\bWORLD_SIZE\b|\bmpirun\b|horovod"
)


def _distributed_job(hit: Hit) -> bool:
    if hit.rank is not None:
        return True
    return any(_DISTRIBUTED_JOB.search(ln.text) for ln in [*hit.before(24, same_rank=False), *hit.after(24)])


def _check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _SOURCE_LINE.search(hit.text):
        return None  # the traceback's quoted source line ('raise ValueError("...")'), not the exception
    kind = m.lastgroup or "group"
    if m.group(0).startswith("module must have") and not _distributed_job(hit):
        return []  # nn.DataParallel alone: one process driving several GPUs, no distributed job to diagnose
    facts: dict[str, object] = {"c10d_check": m.group(0), "usage_check": kind}
    op = traceback_op(hit)
    if op:
        facts["op"] = op
    t = hit.text.strip()
    who = (
        "fairscale's reduce-scatter bucketer"
        if "expected group.size()" in m.group(0)
        else "torch.distributed"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: {who} rejected the call{f' to {op}' if op else ''}: "
            f"{_WHAT[kind]} ({clip(t[t.find(m.group(0)) :] if m.group(0) in t else t, 160)})",
            facts,
            # A group destroyed under a collective is most often the teardown after another failure.
            tier=1 if "has been destroyed" in t else None,
            dedupe=(row.code, hit.rank, kind),
        )
    ]


_EXC = "the exception type ('ValueError: ', 'RuntimeError: ', 'TypeError: ') before torch's message"
# The checks' own words that stand for the check without the exception type before it (a thread's title, the
# second line of a Ray task error): each is c10d's sentence, said by no healthy line.
_OWN_WORDS = (
    b"backend constrained",
    b"No backend type associated",
    b"Invalid process group specified",
    b"default process group twice",
    b"please create group with",
    b"Invalid backend: '",
    b"Unknown backend '",
    b"Invalid device:backend pairing",
    b"Mismatched bound device between",
    b"Expecting one tensor only but got multiple",
    b"Attempt to perform collective on tensor not on device",
    b"while the `Accelerator` is configured for",
    b"rank should not be the same as the rank",
    b"Must provide object_gather_list",
    b"scatter_object_output_list to be a list",
    b"Split sizes doesn't match total dim 0",
    b"does not divide equally across group size",
    b"Number of tensor splits not equal",
    b") must be divisible by",
    b"has appeared in both subgroup",
    b"DistributedDataParallel is not needed",
    b"replicas_[0].size() >= 1",
    b"inputs, expected group.size()",
    b"device_ids can only be None or contain",
    b"device_ids and output_device arguments only",
    b"can't be used with `DistributedDataParallel`",
    b"SyncBatchNorm layers only work with GPU",
    b"(device_ids[0]) but found one of them",
    b"Mesh should not be bigger than default world size",
    b"DeviceMesh only support homogeneous hardware",
)
SIGNATURES = (
    Signature(
        "c10d usage check",
        _CHECKS,
        _check,
        C.C10D_INVALID_USAGE.code,
        # ("No backend type associated with device type cpu" is c10d's own sentence, also quoted bare
        # as an issue's title or a user's one-line summary without the exception before it; so are the
        # other checks whose words no healthy line says, and Ray prints the exception type on the line
        # above the message. The rest keep the exception type as their anchor.)
        anchors=(b"rror", *_OWN_WORDS),
        worth=(rb"Error\b", *(re.escape(a) for a in _OWN_WORDS)),
        words=(
            "group",
            "backend",
            "device",
            "`accelerator` is configured",
            "argument",
            "invalid",
            "rank",
            "split",
            "coalescing",
            "complex tensors",
            "reduction, got",
            "invalid reduce op",
            "average operation is not supported",
            "object_gather_list",
            "scatter_object",
            "illegalwork",
            "one tensor only",
            "dim 0",
            "empty tag",
            "world size",
            "distributeddataparallel",
            "ddp pickling",
            "syncbatchnorm",
            "mesh",
            "microbatches",
            "tensor_shape must",
            "stages",
            "work needs",
            "work result",
            "takes a single tensor",
            "bucket view",
            "ddp reducer",
            "replicas_[0]",
            "at least one parameter",
            "expected group.size()",
            "list size",
            "tag must be",
            "worldsize",
            "bucket",
            "devices[0]",
        ),
        anchor_from=_EXC,
        examples=(
            "ValueError: Invalid process group specified",
            "[rank1]: RuntimeError: No backend type associated with device type cpu",
            "ValueError: Invalid backend: 'ncl'",
            "RuntimeError: Must provide object_gather_list on dst rank",
            "ValueError: The world size (8) must be divisible by 'group_size=3'",
            "RuntimeError: Split sizes doesn't match total dim 0 size",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
