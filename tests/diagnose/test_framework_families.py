"""The stacks that run beside or under PyTorch on multi-GPU jobs, read at their source: XLA's collective
rendezvous and the coordination service's heartbeat (xla_runtime.py), gRPC transport failures between
TensorFlow/JAX workers (grpc_transport.py), Open MPI's runtime and the UCX/verbs completion errors
(mpi_fabric.py), oneCCL's fabric providers (oneccl.py), TensorFlow's collective ops (tf_collectives.py),
ROCm's HSA faults and RCCL's HIP errors (rocm_runtime.py), Horovod's stall shutdown (mismatch.py), XLA's
human-readable out-of-memory size and TF's "Dst tensor is not initialized" (oom_layers.py); with the families other modules already read for these
stacks (Horovod, TF collective ops, XLA's NCCL calls, RCCL, HIP) pinned beside them.

Every positive line is tried bare and behind each prefix these stacks put before a line (mpirun's
--tag-output, glog's E/F lines of TF and JAX, torchrun's [rankN]:, a logger timestamp). The negative lines
are healthy prints of the same stacks that use the same words: they stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import failure_findings, root_finding

# (prefix, on every line): a launcher's tag and a logger's stamp mark every line; glog's prefix (TF, JAX,
# Horovod's own logging) marks only the first line of one message that holds newlines.
PREFIXES = [
    ("", True),
    ("[1,3]<stderr>:", True),
    ("E1204 12:00:00.000000  4567 client.cc:101] ", False),
    ("2023-05-26 10:00:00.123456: W tensorflow/core/common_runtime/base_collective_executor.cc:249] ", False),
    ("[rank3]: ", True),
    ("2024-01-01T12:00:00.123Z ", True),
]

CASES = [
    # XLA's rendezvous of the devices of one collective: a participant never arrived
    (
        "2024-01-01 12:00:00.000000: E external/xla/xla/service/rendezvous.cc:38] This thread has been "
        "waiting for `first call to collective operation 4; run_id=123` for 20 seconds and may be stuck. All "
        "8 threads must join the rendezvous, however only 7 of them arrived on time.",
        "RUN151",
        {"participants": 8, "arrived": 7, "waited_s": 20},
    ),
    (
        "F0101 12:00:00.000000 1234 rendezvous.cc:96] Termination timeout for `first call to collective "
        "operation 4; run_id=123` of 40 seconds exceeded. Exiting to ensure a consistent program state. "
        "Expected 8 threads to join the rendezvous, but only 7 of them joined the rendezvous.",
        "RUN151",
        {"waited_s": 40},
    ),
    (
        "2021-06-01 12:09:19.912475: E external/org_tensorflow/tensorflow/compiler/xla/service/"
        "collective_ops_utils.h:209] This thread has been waiting for 5000ms for and may be stuck: "
        "participant for device ordinal 1, stream 0x5594682cb160 waiting for all participants to arrive at rendezvous "
        "RendezvousKey{run_id=RunId: 85034, global_devices=[0,1,2,3], num_local_participants=4, "
        "collective_op_kind=cross_replica, op_id=534}",
        "RUN151",
        {"device": 1, "participants": 4},
    ),
    # the coordination service lost a running task: that task died
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: Task /job:worker/replica:0/task:1 "
        "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly.",
        "RUN133",
        {"ranks": [1]},
    ),
    (
        "E1204 12:00:00.000000 4567 coordination_service.cc:512] /job:jax_worker/replica:0/task:3 has been "
        "set to ERROR in coordination service: ABORTED: [/job:jax_worker/replica:0/task:3] Task heartbeat "
        "timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly.",
        "RUN133",
        {"ranks": [3]},
    ),
    (
        "F1204 12:00:00.000000 4567 client.cc:101] Terminating process because the JAX distributed service "
        "detected fatal errors. This most likely indicates that another task died; see the other task logs "
        "for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous "
        "output. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):\n"
        "/job:jax_worker/replica:0/task:1\n"
        "The tasks have crashed. Check the task logs for an earlier error to debug further.",
        "RUN133",
        {"ranks": [1]},
    ),
    (
        "F0522 08:00:00.000000 123 client.cc:93] Terminating process because the coordinator detected "
        "missing heartbeats. This most likely indicates that another task died; see the other task logs for "
        "more details. Status: UNAVAILABLE: Task /job:jax_worker/replica:0/task:2 heartbeat timeout.",
        "RUN133",
        {"ranks": [2]},
    ),
    (
        "F0101 00:00:00.000000 1 client.h:90] Terminating process because of missing heartbeat response from "
        "the coordinator. This most likely indicates that the coordinator task died; see the coordinator's task "
        "logs for more details. Status: DEADLINE_EXCEEDED: Deadline Exceeded",
        "RUN133",
        {"problem": "peer_task_died"},
    ),
    (
        "E0321 02:08:55.130815 1 coordination_service_agent.cc:] Coordination agent is set to ERROR: "
        "UNAVAILABLE: Failed to send RPC to coordination service. Either the leader task died or the network "
        "connection is broken.",
        "RUN133",
        {"problem": "peer_task_died"},
    ),
    # the NCCL id exchanged through the coordination service's key-value store never came
    (
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: GetKeyValue() timed out with key: "
        "cuda:gpu_nccl_unique_id:0 and duration: -1ms",
        "RUN221",
        {"key": "cuda:gpu_nccl_unique_id:0"},
    ),
    # TensorFlow's collective ops: timed out, or aborted by the first failure
    (
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out during execution.",
        "RUN151",
        {"when": "during execution"},
    ),
    (
        "2023-05-26 10:00:00.123456: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
        "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Collective has timed out waiting for other workers.",
        "RUN151",
        {"when": "waiting for other workers"},
    ),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: Connection reset "
        "by peer",
        "RUN174",
        {"aborted_by": "Connection reset by peer"},
    ),
    (
        "W tensorflow/core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort "
        "Unavailable: Collective ops is aborted by: failed to connect to all addresses",
        "RUN174",
        {"aborted_by": "failed to connect to all addresses"},
    ),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: [_Derived_]Collective ops is aborted by: "
        "Deadline Exceeded\nAdditional GRPC error information from remote target /job:worker/replica:0/task:0",
        "RUN151",
        {"aborted_by": "Deadline Exceeded"},
    ),
    # gRPC transport between workers
    (
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Deadline Exceeded\n"
        "Additional GRPC error information from remote target /job:worker/replica:0/task:1:\n"
        ':{"created":"@1600000000.1","description":"Error received from peer ipv4:10.0.0.2:2222",'
        '"file":"external/com_github_grpc_grpc/src/core/lib/surface/call.cc","file_line":1056,'
        '"grpc_message":"Deadline Exceeded","grpc_status":4}',
        "RUN151",
        {"problem": "grpc_deadline", "peer": "/job:worker/replica:0/task:1"},
    ),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n"
        "Additional GRPC error information from remote target /job:worker/replica:0/task:0:\n"
        ':{"created":"@1597444069.532383567","description":"Error received from peer ipv4:10.7.211.16:912",'
        '"file":"external/com_github_grpc_grpc/src/core/lib/surface/call.cc","file_line":1056,'
        '"grpc_message":"Socket closed","grpc_status":14} [Op:CollectiveBcastRecv]',
        "RUN174",
        {"grpc_error": "Socket closed", "peer": "/job:worker/replica:0/task:0"},
    ),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: Stream removed",
        "RUN174",
        {"grpc_error": "Stream removed"},
    ),
    (
        "W tensorflow/core/distributed_runtime/rpc/grpc_remote_master.cc:160] RPC failed with status = "
        '"Unavailable: Socket closed" and grpc_error_string = "{"created":"@1609120565.25",'
        '"description":"Error received from peer ipv4:10.180.83.2:8470","grpc_message":"Socket closed",'
        '"grpc_status":14}", maybe retrying the RPC',
        "RUN174",
        {},
    ),
    # Open MPI's runtime lost a node after launch; InfiniBand completions that failed under UCX/verbs
    (
        "ORTE has lost communication with a remote daemon.\n\n"
        "  HNP daemon   : [[64112,0],0] on node wmaster-desktop\n"
        "  Remote daemon: [[64112,0],1] on node 10.126.10.10\n\n"
        "This is usually due to either a failure of the TCP network\n"
        "connection to the node, or possibly an internal failure of\n"
        "the daemon itself. We cannot recover from this failure, and\n"
        "therefore will terminate the job.",
        "RUN174",
        {"host": "10.126.10.10"},
    ),
    (
        "PRTE has lost communication with a remote daemon.",
        "RUN174",
        {},
    ),
    (
        "[a670n1:162239:0:162239] ib_mlx5_log.c:177  Local protection on mlx5_0:1/IB (synd 0x4 vend 0x51 "
        "hw_synd 0/2)",
        "RUN173",
        {"ib_device": "mlx5_0", "ib_error": "Local protection"},
    ),
    (
        "[1701234567.123] [node1:1234 :0]       ib_mlx5_log.c:143  UCX  ERROR Remote access on mlx5_2:1/RoCE "
        "(synd 0x13 vend 0x88 hw_synd 0/0)",
        "RUN173",
        {"ib_device": "mlx5_2", "link": "RoCE"},
    ),
    (
        (
            "[r1071:27563:0:27563] rc_verbs_iface.c:63   FATAL: send completion with error: local "
            "protection error"
        ),
        "RUN173",
        {"ib_error": "local protection error"},
    ),
    (
        "[1467152048.497975] [softiron-3:3087 :0] rc_verbs_iface.c:47   UCX  ERROR Send completion with "
        "error: transport retry counter exceeded",
        "RUN173",
        {},
    ),
    (
        "mlx5: softiron-2: got completion with error:\n"
        "00000000 00000000 00000000 00000000\n"
        "00000000 00000000 00000000 00000000\n"
        "00000005 00000000 00000000 00000000\n"
        "00000000 01006102 0800012e 1f3a2cd2",
        "RUN173",
        {"problem": "ib_completion_error"},
    ),
    (
        "[node2][[1234,1],3][btl_openib_component.c:3645:handle_wc] from node2 to: node3 error polling LP CQ "
        "with status RETRY EXCEEDED ERROR status number 12 for wr_id 1234 opcode 0  vendor error "
        "129 qp_idx 0",
        "RUN173",
        {"wc_status": 12},
    ),
    # oneCCL without a fabric provider
    (
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| atl_ofi_helper.cpp:867 atl_ofi_get_prov_list: fi_getinfo "
        "error: ret -61, providers 0\n"
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| atl_ofi_helper.cpp:907 atl_ofi_get_prov_list: can't create "
        "providers for name shm\n"
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| atl_ofi.cpp:243 init: can't find suitable provider",
        "RUN294",
        {"provider": "shm", "fi_errno": -61},
    ),
    # Horovod's stall inspector at its shutdown time
    (
        "[2021-01-01 12:00:00.000000: E /tmp/pip/horovod/common/stall_inspector.cc:142] One or more rank "
        '(marked by "!") is stalled for longer than 600 seconds. Will shutdown.',
        "RUN201",
        {"framework": "horovod"},
    ),
    (
        "[2021-01-01 12:00:00.000000: W /tmp/pip/horovod/common/stall_inspector.cc:107] One or more tensors "
        "were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder "
        "of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit "
        "different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. \n"
        "Stalled ranks:\n"
        "0!: [HorovodAllreduce_Const_9_0]\n"
        "2: [HorovodAllreduce_Const_9_0, HorovodAllreduce_Const_10_0]\n"
        'One or more rank (marked by "!") is stalled for longer than 600 seconds. Will shutdown.',
        "RUN201",
        {"missing_ranks": [0, 2]},
    ),
    # MPI's truncated message: the ranks' sizes differ
    (
        "[node1:12345] *** An error occurred in MPI_Allreduce\n"
        "[node1:12345] *** reported by process [123,0]\n"
        "[node1:12345] *** on communicator MPI_COMM_WORLD\n"
        "[node1:12345] *** MPI_ERR_TRUNCATE: message truncated\n"
        "[node1:12345] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
        "RUN201",
        {"op": "Allreduce", "kind": "mpi_truncate"},
    ),
    (
        "Fatal error in PMPI_Allreduce: Message truncated, error stack:\n"
        "PMPI_Allreduce(1600)..........: MPI_Allreduce(sbuf=0x1, rbuf=0x2, count=2, MPI_FLOAT, MPI_SUM, "
        "MPI_COMM_WORLD) failed\n"
        "MPIDI_CH3U_Receive_data_found(131): Message from rank 1 and tag 14 truncated; 8 bytes received but "
        "buffer size is 4",
        "RUN201",
        {"op": "Allreduce", "peer_rank": 1, "bytes": 8, "buffer": 4},
    ),
    (
        "E0000 00:00:1743713172.513857  698835 pjrt_stream_executor_client.cc:3072] Execution of replica 0 "
        "failed: DEADLINE_EXCEEDED: GetKeyValue() timed out with key: devices=[0,1,2,3]; stream=0; "
        "groups=[[0,1,2,3]]; root_device=0; num_local_participants=2 and duration: 10m",
        "RUN221",
        {"key": "devices=[0,1,2,3]"},
    ),
    # ROCm's HSA runtime and RCCL's CUDA check naming a HIP error
    (
        ":0:rocdevice.cpp            :2672: 1234567890 us: 12345: [tid:0x7f] Device::callbackQueue aborting "
        "with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond "
        "the largest legal address. code: 0x29",
        "RUN244",
        {"hsa_status": "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"},
    ),
    (
        ":0:rocdevice.cpp            :2672: 1234567890 us: 12345: [tid:0x7f] Device::callbackQueue aborting "
        "with error : HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. "
        "code: 0x1016",
        "RUN295",
        {"runtime": "rocm"},
    ),
    (
        "node1:123:456 [0] NCCL WARN Cuda failure 'hipErrorNoBinaryForGpu'",
        "RUN265",
        {"reason": "no_code_object"},
    ),
    # TF's input copy to the GPU whose buffer could not be allocated
    (
        "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
        "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order "
        "to run _EagerConst: Dst tensor is not initialized.",
        "RUN101",
        {"gpu_index": 0},
    ),
    # XLA's out-of-memory with the size in human-readable units
    (
        "E1204 12:00:00.000000  123 pjrt_stream_executor_client.cc:2985] Execution of replica 0 failed: "
        "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2.00GiB.",
        "RUN101",
        {"format": "xla"},
    ),
]

# The families of these stacks that other modules read: pinned so that the new rows never take them.
ALREADY_READ = [
    (
        (
            "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out "
            "during execution."
        ),
        "collective_timeout",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: "
            "Connection reset by peer"
        ),
        "nccl_network",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: [_Derived_]Collective ops is "
            "aborted by: Deadline Exceeded"
        ),
        "collective_timeout",
    ),
    (
        (
            "2021-01-01 00:00:00.000000: E tensorflow/core/nccl/nccl_manager.cc:654] Error: unhandled "
            "system error"
        ),
        "nccl_network",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
            "tensor with shape[1024,1024,64] and type float on "
            "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
        ),
        "cuda_oom",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: "
            "external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, "
            "nranks, id, rank) failed: unhandled system error"
        ),
        "nccl_network",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: "
            "external/xla/xla/service/gpu/runtime/nccl_api.cc:615: NCCL operation ncclGroupEnd() "
            "failed: unhandled cuda error (run with NCCL_DEBUG=INFO for details); current tracing "
            "scope: all-reduce-start.1"
        ),
        "nccl_usage",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
            "allocate 17179869184 bytes."
        ),
        "cuda_oom",
    ),
    (
        (
            "[1,0]<stderr>:horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. "
            "This was caused by an exception on one of the ranks or an attempt to allreduce, allgather "
            "or broadcast a tensor after one of the ranks finished execution."
        ),
        "collective_mismatch",
    ),
    (
        (
            "[1,0]<stderr>:tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched "
            "allreduce tensor shapes: One rank sent a tensor of shape [10], but another rank sent a "
            "tensor of shape [11]."
        ),
        "collective_mismatch",
    ),
    (
        (
            "[1,0]<stderr>:horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: "
            "unhandled system error"
        ),
        "nccl_network",
    ),
    (
        (
            "[1701234567.123456] [node2:12345:0]        ib_iface.c:746  UCX  ERROR  Transport retry "
            "count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)"
        ),
        "nccl_network",
    ),
    (
        "mpirun noticed that process rank 3 with PID 4567 on node gpu02 exited on signal 9 (Killed).",
        "host_oom",
    ),
    (
        (
            "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 63.98 GiB of which 1.00 GiB is free."
        ),
        "cuda_oom",
    ),
    (
        (
            "Memory access fault by GPU node-2 (Agent handle: 0x55d8c0c0c0c0) on address "
            "0x7f1234000000. Reason: Page not present or supervisor privilege."
        ),
        "gpu_hardware",
    ),
    (
        (
            "node1:1234:5678 [3] "
            "/long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/build/hipify/src/transport/net_ib.cc:1290 "
            "NCCL WARN NET/IB : Got completion from peer 10.1.1.2<55555> with error 12, opcode 0, len "
            "0, vendor err 129 (Recv)"
        ),
        "nccl_network",
    ),
    (
        (
            "mxnet.base.MXNetError: [12:00:00] src/storage/./pooled_storage_manager.h:157: cudaMalloc "
            "failed: out of memory"
        ),
        "cuda_oom",
    ),
]

HEALTHY = [
    "2023-05-26 10:00:00.123456: W tensorflow/core/distributed_runtime/rpc/grpc_remote_worker.cc:50] "
    "Unavailable: Connection refused, retrying",
    (
        "2024:01:01-12:00:00:(12345) |CCL_WARN| did not find MPI-launcher specific variables, "
        "switch to ATL/OFI, to force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi"
    ),
    (
        "2023:11:28-16:35:45:(35980) |CCL_WARN| could not get local_idx/count from environment "
        "variables, trying to get them from ATL"
    ),
    (
        'node1:1234:5678 [0] NCCL WARN Missing "iommu=pt" from kernel command line which can lead '
        "to system instablity or hang!"
    ),
    (
        "[1701292112.829711] [a670n1:162239:0]      ucp_worker.c:1855 UCX  INFO    0x100b240 "
        "inter-node cfg#3 tag(rc_mlx5/mlx5_0:1 rc_mlx5/mlx5_0:1)"
    ),
    (
        "I1204 12:00:00.000000 4567 coordination_service.cc:578] /job:jax_worker/replica:0/task:1 "
        "has connected to coordination service. Incarnation: 123"
    ),
    "I0101 12:00:00.000000 1 client.cc:80] Connected to distributed JAX controller",
    (
        "2023-05-26 10:00:00.123456: I "
        "tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:272] Initialize GrpcChannelCache "
        "for job worker -> {0 -> 10.0.0.1:2222, 1 -> 10.0.0.2:2222}"
    ),
    (
        "2023-05-26 10:00:00.123456: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1613] "
        "Created device /job:worker/replica:0/task:0/device:GPU:0 with 14626 MB memory"
    ),
    (
        "[1,0]<stderr>:[2021-01-01 12:00:00.000000: W /tmp/pip/horovod/common/operations.cc:850] "
        "Horovod timeline is enabled"
    ),
    (
        "INFO:tensorflow:Collective all_reduce tensors: 120 all_reduces, num_devices = 8, "
        "group_size = 16, implementation = CommunicationImplementation.NCCL, num_packs = 1"
    ),
    (
        "W0101 12:00:00.000 xla_bridge.py:863] An NVIDIA GPU may be present on this machine, but a "
        "CUDA-enabled jaxlib is not installed. Falling back to cpu."
    ),
    (
        "2024-01-01 12:00:00.000000: W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The "
        "NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version "
        "(12.4.131). Because the driver is older than the ptxas version, XLA is disabling parallel "
        "compilation, which may slow down compilation."
    ),
    (
        "2024-01-01 12:00:00.000000: W external/tsl/tsl/framework/bfc_allocator.cc:296] Allocator "
        "(GPU_0_bfc) ran out of memory trying to allocate 2.16GiB with freed_by_count=0. The "
        "caller indicates that this is not a failure, but this may mean that there could be "
        "performance gains if more memory were available."
    ),
]


def _prefixed(prefix: tuple[str, bool], text: str) -> str:
    tag, every = prefix
    lines = text.split("\n")
    if not every:
        return tag + text
    return "\n".join(tag + ln if ln.strip() else ln for ln in lines)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("text", "code", "facts"), CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_family_line_reaches_its_root_cause(
    prefix: tuple[str, bool], text: str, code: str, facts: dict
) -> None:
    log = _prefixed(prefix, text)
    root = root_finding(log)
    assert root is not None and root.code == code, (log, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (log, k, root.facts)


@pytest.mark.parametrize(("text", "category"), ALREADY_READ)
def test_families_read_elsewhere_keep_their_class(text: str, category: str) -> None:
    root = root_finding(text)
    assert root is not None and root.category == category, (text, root)


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_lines_of_these_stacks_stay_silent(prefix: tuple[str, bool], text: str) -> None:
    assert failure_findings(_prefixed(prefix, text)) == []


def test_heartbeat_loss_yields_to_the_dead_tasks_own_error() -> None:
    """The coordination service's lost heartbeat is the consequence: the task's own failure leads."""
    log = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
        "capacity of 79.15 GiB of which 1.00 GiB is free.\n"
        "F1204 12:00:00.000000 4567 client.cc:101] Terminating process because the JAX distributed service "
        "detected fatal errors. This most likely indicates that another task died; see the other task logs "
        "for more details.\n"
    )
    root = root_finding(log)
    assert root is not None and root.category == "cuda_oom", root


def test_grpc_failure_at_start_up_is_not_read_as_the_running_jobs_network() -> None:
    """A gRPC failure while the processes register with the coordinator is the rendezvous family's."""
    log = (
        '  File "/usr/lib/python3.10/site-packages/jax/_src/distributed.py", line 95, in initialize\n'
        "    self.client.connect()\n"
        "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN174" or root.facts.get("problem") != "grpc_unavailable", root
