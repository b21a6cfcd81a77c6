"""NCCL usage and c10d usage, read at their sources (continues test_diagnose_source_families4.py).

Every line below is a message as its source writes it, with the source named beside it; each is
tried behind the prefixes real logs add (torchrun's "[rank3]: ", pdsh/Slurm "node7: ", a logging
format, Ray's worker prefix) and, for NCCL's WARN texts, in each WARN format (NCCL <= 2.3 without the
word NCCL, 2.4-2.22, 2.23+ with a timestamp) and under torch's "NCCL error in: ... Last error:".
Decoys with the same words stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = [
    "",
    "[rank3]: ",
    "node7: ",
    "2025-01-02 03:04:05,678 - ERROR - ",
    "(RayWorkerWrapper pid=335, ip=10.1.0.67) ERROR 01-29 07:44:33 worker_base.py:467] ",
]
# debug.cc's WARN record: <= 2.3 ("host:pid:tid [dev] file:line WARN msg"), 2.4-2.22, 2.23+ ("[%F %T] ").
WARN_FORMATS = [
    "node1:1234:5678 [0] init.cc:1210 WARN ",
    "node1:1234:5678 [0] init.cc:1210 NCCL WARN ",
    "[2025-04-06 22:31:56] node1:1234:5678 [0] init.cc:1210 NCCL WARN ",
]
TORCH_USAGE = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:77, "
    "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.3\n"
    "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
)


# torch/distributed/distributed_c10d.py (1.x RuntimeError, 2.x ValueError/TypeError/AssertionError) and
# c10d's C++ (ProcessGroup.hpp getBackend, Utils.hpp checkSplitSizes, ProcessGroupNCCL getNCCLComm /
# check_gpu_single_tensor), as the exception line a traceback ends with.
C10D_USAGE = [
    # the group: _check_default_pg / get_rank / destroy_process_group (1.x RuntimeError, 2.x ValueError)
    ("RuntimeError: Invalid process group specified", "group"),
    ("ValueError: Invalid process group specified or has been destroyed.", "group"),
    ("RuntimeError: The given group does not exist", "group"),  # 1.x _get_group_rank
    (
        "RuntimeError: The global rank 3 is not part of the group "
        "<torch._C._distributed_c10d.ProcessGroupNCCL object at 0x7f00>",
        "group",
    ),
    ("RuntimeError: group.WORLD does not have local rank to global rank mapping", "group"),
    (
        "ValueError: Group <torch.distributed.distributed_c10d.ProcessGroup object at 0x7f00> is not "
        "registered, please create group with torch.distributed.new_group API",
        "group",
    ),
    ("ValueError: Global rank 5 is not part of group <ProcessGroup object at 0x7f00>", "group"),
    ("ValueError: Expecting a ProcessGroup, but got a <class 'int'>.", "group"),
    ("ValueError: trying to initialize the default process group twice!", "group"),
    (
        "ValueError: The specified group name has already been created, please use a different group name",
        "group",
    ),
    ("ValueError: All ops need to use the same group.", "group"),  # batch_isend_irecv
    # the backend and device type
    ("ValueError: Invalid backend: 'ncl'", "backend"),  # 1.x Backend.__new__
    (
        "ValueError: Unknown backend 'ncl'. Specify a 'device:backend' string or use one of: "
        "['gloo', 'nccl']",
        "backend",
    ),
    ("AssertionError: Unknown backend type ncl", "backend"),  # _new_process_group_helper (2.13)
    ("ValueError: Backend name must be a string, but got: None", "backend"),
    ("ValueError: Invalid device:backend pairing: cuda-nccl.", "backend"),
    ("ValueError: Duplicate device type cuda in backend string: cuda:nccl,cuda:gloo.", "backend"),
    ("RuntimeError: No backend type associated with device type cpu", "backend"),  # ProcessGroup.hpp 2.0+
    ("RuntimeError: Could not retrieve or create the backend 0 for device type cuda", "backend"),
    ("ValueError: monitored_barrier is only implemented for GLOO backend.", "backend"),
    (
        "ValueError: We detected accelerator xpu on your machine. But we don't know which communication "
        "backend to use for this accelerator.",
        "backend",
    ),
    ("ValueError: Default backend not registered for device : cpu", "backend"),
    # the device binding
    (
        "ValueError: device_id cuda:9 is out of range. Please use a device index less than the number of "
        "accelerators available: 8.",
        "device",
    ),
    ("ValueError: Please use a device_id with index.", "device"),
    ("AssertionError: Mismatched bound device between new pg and the default pg.", "device"),
    (
        "RuntimeError: Not able to create/get the NCCL Communicator since the GPU devices are not known",
        "device",
    ),  # ProcessGroupNCCL::getNCCLComm 1.x-2.2
    (
        "RuntimeError: Expecting one tensor only but got multiple. You are probably using multiple "
        "devices under one thread.",
        "device",
    ),
    # a collective's arguments
    (
        "TypeError: Invalid function argument. Expected parameter `tensor` of type torch.Tensor",
        "arguments",
    ),  # _check_single_tensor (2.x)
    (
        "RuntimeError: Invalid function argument. Expected parameter `tensor_list` to be of type "
        "List[torch.Tensor].",
        "arguments",
    ),  # 1.x
    (
        "ValueError: Invalid destination rank: destination rank should not be the same as the rank of "
        "the current process.",
        "arguments",
    ),
    ("ValueError: Argument ``gather_list`` must be specified on destination rank.", "arguments"),
    ("ValueError: Argument ``scatter_list`` must NOT be specified on non-source ranks.", "arguments"),
    (
        "ValueError: Invalid ``p2p_op_list``. Each op is expected to to be of type "
        "``torch.distributed.P2POp``.",
        "arguments",
    ),
    ("ValueError: all_reduce does not support ReduceOp.MAX on complex tensors", "arguments"),
    ("RuntimeError: Split sizes doesn't match total dim 0 size", "arguments"),  # Utils.hpp
    ("RuntimeError: Tensor's dim 0 does not divide equally across group size", "arguments"),
    ("RuntimeError: Number of tensor splits not equal to group size", "arguments"),
    # object collectives
    ("AssertionError: Must provide object_gather_list on dst rank", "object_collective"),
    (
        "ValueError: Expected argument scatter_object_output_list to be a list of size at least 1.",
        "object_collective",
    ),
    # subgroups, splits, shrink
    (
        "RuntimeError: The new group's rank should be within the the world_size set by init_process_group",
        "subgroup",
    ),  # 1.x, "the the" as written
    (
        "ValueError: the new group's world size should be less or equal to the world size set by "
        "init_process_group",
        "subgroup",
    ),
    ("ValueError: The world size (8) must be divisible by 'group_size=3'", "subgroup"),
    ("ValueError: Rank 2 has appeared in both subgroup [0, 2] and [1, 2]", "subgroup"),
    ("ValueError: the split group cannot have duplicate ranks", "subgroup"),
    ("ValueError: Cannot shrink a process group with size 1. Group must have at least 2 ranks", "subgroup"),
    # DistributedDataParallel's constructor (torch/nn/parallel/distributed.py _log_and_throw, 1.x-2.x)
    (
        "RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter "
        "that requires a gradient.",
        "ddp",
    ),
    ("ValueError: device_ids can only be None or contain a single element.", "ddp"),
    (
        "ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
        "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device "
        "0, and module parameters {device(type='cpu')}.",
        "ddp",
    ),
    (
        "RuntimeError: Modules with uninitialized parameters can't be used with `DistributedDataParallel`. "
        "Run a dummy forward pass to correctly initialize the modules",
        "ddp",
    ),
    ("ValueError: SyncBatchNorm layers only work with GPU modules", "ddp"),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "kind"), C10D_USAGE)
def test_c10d_usage_checks_are_c10d_usage(prefix: str, line: str, kind: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.code == "RUN301" and f.category == "nccl_usage", (line, f)
    assert f.facts["usage_check"] == kind
    if prefix.startswith("[rank3]"):
        assert f.scope.rank == 3 or f.facts.get("rank") == 3


def test_c10d_usage_wrapped_by_ray_and_named_by_its_traceback() -> None:
    # Ray re-raises the worker's exception behind its own type (ray.exceptions.RayTaskError(ValueError)).
    f = _root(
        "ray.exceptions.RayTaskError(ValueError): ray::RayTrainWorker._RayTrainWorker__execute() "
        "(pid=123, ip=10.0.0.2) ValueError: Invalid process group specified"
    )
    assert f is not None and f.code == "RUN301", f
    # the collective is the last public torch.distributed frame; the raise line quoted by the traceback
    # is not read as the message
    log = (
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/workspace/train.py", line 88, in <module>\n'
        "[rank1]:     dist.all_to_all_single(out, inp, splits_out, splits_in)\n"
        '[rank1]:   File "/usr/lib/python3/site-packages/torch/distributed/c10d_logger.py", line 83, '
        "in wrapper\n"
        "[rank1]:     return func(*args, **kwargs)\n"
        '[rank1]:   File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", '
        "line 4688, in all_to_all_single\n"
        "[rank1]:     work = group.alltoall_base(\n"
        "[rank1]: RuntimeError: Split sizes doesn't match total dim 0 size\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN301" and f.facts["op"] == "all_to_all_single", f
    assert f.scope.rank == 1 or f.facts.get("rank") == 1


def test_the_environment_and_the_rendezvous_keep_their_own_c10d_texts() -> None:
    # distributed_c10d.py, but not the program's call: no default group (rendezvous), no NCCL (env)
    f = _root(
        "ValueError: Default process group has not been initialized, please make sure to call "
        "init_process_group."
    )
    assert f is not None and f.category == "rendezvous", f
    f = _root("RuntimeError: Distributed package doesn't have NCCL built in")
    assert f is not None and f.category == "driver_env", f
    f = _root("ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    assert f is not None and f.category == "driver_env", f


# ProcessGroupNCCL.cpp's own checks (check_gpu_tensors_*, flatten_for_scatter_gather, getNcclDataType,
# getNcclReduceOp, gather/scatter invalidArgument), 1.x-2.x.
@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Tensors must have identical size",
        "ValueError: Tensors must have identical strides",
        "ValueError: Tensors must be on distinct GPU devices",
        "ValueError: Expected list of tensors on the same device",
        "ValueError: Tensor list operands to scatter/gather must have the same length",
        "ValueError: Tensor list input to scatter/gather must match number of collective participants but "
        "got 4 inputs with world_size 8 and 1 devices.",
        "ValueError: All tensor operands to scatter/gather must have the same number of elements",
        "TypeError: Input tensor data type is not supported for NCCL process group: ComplexFloat",
        "RuntimeError: Unconvertible NCCL type",  # torch/csrc/cuda/nccl.cpp 1.x (DataParallel)
        "TypeError: Cannot use ReduceOp.AVG with boolean inputs",
        "TypeError: PreMulSum Data type must be half, float, or double",
        "ValueError: ProcessGroupNCCL::gather: requires empty output on non-root",
        "ValueError: ProcessGroupNCCL::scatter: Incorrect input list size 4. Input list size should be 8, "
        "same as size of the process group.",
        "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INVALID_USAGE: invalid usage",  # CuPy (Ray)
    ],
)
def test_process_group_nccl_checks_are_nccl_usage(prefix: str, line: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.code == "RUN191", (line, f)


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: AVG requires NCCL 2.10+. The current version is 2.7",  # getNcclReduceOp
        "ValueError: PreMulSum requires NCCL>=2.11.1",
        "NotImplementedError: Capturing NCCL collectives is only allowed with NCCL >= 2.9.6",
        "NotImplementedError: ProcessGroupNCCL only supports alltoall* for NCCL lib version >= 2.7.0",
    ],
)
def test_process_group_nccl_version_floors_are_the_environment(line: str) -> None:
    f = _root(line)
    assert f is not None and f.code == "RUN195", (line, f)


# NCCL's WARN texts (src/, 2.4-2.28) that return ncclInvalidUsage / ncclInvalidArgument, by check group.
NCCL_USAGE_WARNS = [
    ("Too many async operations in progress, max is 2048", "too_many"),  # group.cc 2.4-2.9
    ("Too many aggregated operations (2048 max)", "too_many"),  # enqueue.cc 2.5-2.7
    ("Too many aggregated operations on channel 3 (32 max)", "too_many"),  # enqueue.cc 2.8-2.11
    ("Trying to launch too many collectives", "too_many"),  # enqueue.cc 2.3-2.4
    ("Trying to launch too many work elements, max is 512", "too_many"),  # enqueue.cc 2.12
    ("Illegal to have some communicators in graph mode while others not", "graph"),  # group.cc 2.12
    ("Stream is not being captured by the expected graph.", "graph"),  # strongstream.cc 2.19
    (
        "register fails, buffer 0x7f1200000000 (aligned false, granularity 2097152) and size 1000 "
        "(aligned false, granularity 2097152) for registration",
        "registration",
    ),  # init.cc ncclCommRegister 2.19+
    ("Invalid arguments comm 0x55d0c1a2b3c0, buff 0x7f1200000000, size 0, handle 0x7ffd", "registration"),
    ("Deregister: Could not find handle", "registration"),  # register.cc
    (
        "Coll AllReduce size 1048576 symmetric registration check failed on rank 3: sendReg 1 recvReg 0 "
        "mismatch with rank 0 sendReg 1 recvReg 1",
        "registration",
    ),  # argcheck.cc 2.27+
    ("'NCCL_WORK_FIFO_DEPTH=1024' is too small. Minimum value is 2048", "setting"),  # enqueue.cc 2.18
    ('Unrecognized element token "Rings" when parsing "allreduce:Rings"', "setting"),  # graph/tuning.cc
    (
        "Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> or [<ipv6>]:<port> or <hostname>:<port>",
        "setting",
    ),
    (
        "Split shares resources, but parent comm netName IB is different from child comm netName Socket",
        "derived",
    ),  # init.cc ncclCommSplit 2.18+
    ("Comm config netName (IB) does not match the parent (Socket)", "derived"),  # plugin/net.cc
    ("ncclCommGrow: new rank 9 exceeds total ranks 8", "derived"),  # init.cc 2.28
    (
        "Data type supplied to user-created ncclRedOp_t does not match type given to reduction operation",
        "redop",
    ),  # enqueue.cc
    ("ncclRedOpDestroy : invalid communicator passed.", "operator"),
    ("ncclPutSignal: peerWin is NULL", "device_api"),  # enqueue.cc 2.28 one-sided
    ("GIN not supported.", "device_api"),  # gin/gin_host.cc
    ("MemManager: Already suspended", "device_api"),  # mem_manager.cc
    (
        "Cannot create device communicator: ncclDevCommRequirements_t argument must be initialized via "
        "NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER",
        "device_api",
    ),  # dev_runtime.cc
    ("Context 3 is invalid (must be 0)", "device_api"),
    (
        "NET/IB : Attempted to merge incompatible devices: [0]mlx5_0:1/IB and [1]mlx5_1:1/RoCE. Try "
        "selecting NICs of only one link type using NCCL_IB_HCA",
        "nic_config",
    ),  # net_ib init.cc 2.23+
    ("TOPO/NET : Only matched 1 devices, 2 requested from mlx5_0+mlx5_1", "nic_config"),  # graph/topo.cc
    ("Rank 3 requires NIC 1 but that NIC is not available for rank 11", "nic_config"),  # graph/search.cc
]


@pytest.mark.parametrize("fmt", WARN_FORMATS)
@pytest.mark.parametrize(("warn", "kind"), NCCL_USAGE_WARNS)
def test_nccl_usage_warns_by_check(fmt: str, warn: str, kind: str) -> None:
    f = _root(fmt + warn)
    assert f is not None and f.code == "RUN191", (warn, f)
    assert f.facts.get("usage_check") == kind


@pytest.mark.parametrize(("warn", "kind"), NCCL_USAGE_WARNS[::3])
def test_nccl_usage_warns_under_torchs_last_error(warn: str, kind: str) -> None:
    f = _root("[rank2]: " + TORCH_USAGE.replace("\n", "\n[rank2]: ") + warn)
    assert f is not None and f.category == "nccl_usage", (warn, f)
    assert f.facts.get("nccl_version") == "2.28.3"


# Details whose cause does not depend on the ncclResult_t that carried them.
DETAILS = [
    # init.cc 2.28+ / transport/nvls.cc: two ranks on one GPU, in the words that replaced "Duplicate GPU"
    (
        "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this "
        "configuration.",
        "RUN193",
    ),
    (
        'NCCL_NVLS_ENABLE has been set to "1" and communicator has multiple ranks using the same NVML '
        "device. This is not compatible with NCCL_NVLS_ENABLE=1.",
        "RUN193",
    ),
    # init.cc: ranks with different NCCL libraries; dev_runtime.cc / devcomm: program vs library
    ("Mismatched NCCL version detected : rank 0 version 22803 rank 3 version 22105", "RUN195"),
    (
        "NCCL library is too old. This application was compiled with NCCL version 2.28.3, but is running "
        "with NCCL library version 2.27.5.",
        "RUN195",
    ),
    # enqueue.cc / strongstream.cc: CUDA graph capture on a driver below R465
    (
        "The installed CUDA driver is older than the minimum version (R465) required for NCCL's CUDA "
        "Graphs support",
        "RUN261",
    ),
    # plugin/net.cc 2.19+: no network transport at all
    ("Failed to initialize any NET plugin", "RUN294"),
    ("Error: network IB not found.", "RUN294"),
    # NCCL's own consistency checks: internal errors
    (
        "Failed to determine local ranks rank 3 hostHash 7f3a2c hostHash 7f3a2c pidHash 1a2b localRank 0 "
        "localRanks 2 localRank0 0",
        "RUN192",
    ),  # init.cc
    ("Internal error : tree already has 2 children (3 4 5)", "RUN192"),  # graph/connect.cc
    # graph/xml.cc / xml.h reading a supplied topology XML (NCCL_TOPO_FILE, a plugin's file): RUN302
    ("XML Parse error : unterminated comment", "RUN302"),
    ("XML Topology has wrong version 1, 2 needed", "RUN302"),
    ("Attribute arch of node cpu not found", "RUN302"),  # only a supplied file lacks the cpu's arch
    ("Attribute busid of node nic not found", "RUN192"),  # a NIC without a PCI path: internal
    ("No transport found !", "RUN192"),  # transport.cc 2.4-2.11
    ("Error : Could not find transport to connect next group", "RUN192"),  # misc/rings.cc 2.3
]


@pytest.mark.parametrize("fmt", WARN_FORMATS[1:])
@pytest.mark.parametrize(("detail", "code"), DETAILS)
def test_nccl_details_decide_the_cause(fmt: str, detail: str, code: str) -> None:
    f = _root(fmt + detail)
    assert f is not None and f.code == code, (detail, f)
    g = _root(TORCH_USAGE + detail)
    assert g is not None and g.code == code, (detail, g)


def test_any_other_warn_takes_the_kind_of_its_return_chain() -> None:
    # NCCL_DEBUG=INFO prints the frames an error returns through ("init.cc:1402 -> 3"): the number is the
    # ncclResult_t of the WARN's function, whatever the WARN says.
    warn = "node1:1234:5678 [0] init.cc:1395 NCCL WARN ncclCommInitRank: something new went wrong\n"
    f = _root(warn + "node1:1234:5678 [0] NCCL INFO init.cc:1402 -> 3\n")
    assert f is not None and f.code == "RUN192" and f.facts["nccl_result"] == 3, f
    f = _root(warn + "node1:1234:5678 [0] NCCL INFO init.cc:1402 -> 5\n")
    assert f is not None and f.code == "RUN191" and f.facts["nccl_result"] == 5, f


@pytest.mark.parametrize("prefix", PREFIXES[:3])
def test_no_algorithm_quoted_without_its_warn(prefix: str) -> None:
    # enqueue.cc's text as users quote it (https://github.com/NVIDIA/nccl/issues/1670 form)
    f = _root(
        prefix + "Error : no algorithm/protocol available for function ReduceScatter with datatype "
        "ncclFloat32. NCCL_ALGO was set to nvls"
    )
    assert f is not None and f.code == "RUN191", f
    assert f.facts["op"] == "ReduceScatter" and f.facts["nccl_algo"] == "nvls"
    # 2.20+ capitalises it in the WARN itself
    f = _root(
        WARN_FORMATS[1] + "No algorithm/protocol available for function AllGather with datatype ncclInt8."
    )
    assert f is not None and f.code == "RUN191", f


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # Horovod's nccl_operations.cc: "<call> failed: " + ncclGetErrorString
        ("horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: invalid usage", "RUN191"),
        (
            "[1,0]<stderr>:horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: "
            "internal error",
            "RUN192",
        ),
        # TensorFlow's NcclManager, NCCL 1.x strings (src/core.cu ncclGetErrorString)
        (
            "tensorflow.python.framework.errors_impl.UnknownError: ncclAllReduce failed: invalid argument",
            "RUN191",
        ),
        ("ERROR: ncclAllReduce failed: invalid data type", "RUN191"),
        # torch <= 0.4's bundled NCCL 1 through torch.cuda.nccl: two-digit result codes
        ("RuntimeError: NCCL Error 13: invalid data type", "RUN191"),
        ("RuntimeError: NCCL Error 4: invalid device pointer", "RUN191"),
        # XLA: the failed call and NCCL's last WARN on one line; the WARN decides
        (
            "INTERNAL: NCCL operation ncclGroupEnd() failed: invalid usage (run with NCCL_DEBUG=WARN for "
            "details). Last NCCL warning(error) log entry (may be unrelated) 'Duplicate GPU detected : "
            "rank 1 and rank 0 both on CUDA device 1000'.",
            "RUN193",
        ),
    ],
)
def test_other_wrappers_of_ncclgeterrorstring(line: str, code: str) -> None:
    f = _root(line)
    assert f is not None and f.code == code, (line, f)


def test_the_nccl_version_fact_stops_at_the_version() -> None:
    # a wrapped paste joins the next line onto torch's first one
    f = _root(
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1100, invalid usage, NCCL version "
        "2.21.5ncclInvalidUsage: This usually reflects invalid usage of NCCL library."
    )
    assert f is not None and f.facts.get("nccl_version") == "2.21.5", f


@pytest.mark.parametrize(
    "log",
    [
        # progress lines that name groups, backends and devices
        "Epoch 3: group=train backend=nccl device=cuda:0 rank=0 loss=0.2",
        "INFO: process group created: backend=nccl, world_size=8, device_id=cuda:0",
        # another library's backend
        "ValueError: matplotlib: Invalid backend 'agg2'",
        # a traceback's quoted source line alone is not the exception
        '    raise ValueError("Invalid process group specified")',
        # NCCL's own INFO about a group, and a tuning line
        "node1:1234:5678 [0] NCCL INFO comm 0x55d0 rank 0 nranks 8 cudaDev 0 busId 1a000 - Init COMPLETE",
        "node1:1234:5678 [0] NCCL INFO 16777216 Bytes -> Algo 5 proto 2 time 262.715210",
        # WARNs after which NCCL goes on (transport.cc, graph/tuning.cc, graph/search.cc, init.cc)
        "node1:1234:5678 [0] transport.cc:172 NCCL WARN Cannot initialize CollNet, using point-to-point "
        "network instead",
        "node1:1234:5678 [0] graph/tuning.cc:120 NCCL WARN CollNet is not supported or fails to initialize, "
        "ignoring NCCL_ALGO=COLLNET",
        "node1:1234:5678 [0] graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling "
        "back to simple order",
    ],
)
def test_decoys_stay_silent(log: str) -> None:
    assert _root(log) is None
