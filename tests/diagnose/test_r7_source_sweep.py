"""r7's source sweep (2026-12-07): the failure messages of the distributed stacks other than torch.distributed
that real threads paste, rendered as their logs show them, with the class an engineer would name (or silence
for what is no failure, or says too little alone).

Sources read: Horovod (horovod/horovod v0.15-v0.28: common/stall_inspector.cc, the older stall check in
operations.cc, common/common.cc's SHUT_DOWN_ERROR, operations.cc's background loop and init errors,
controller.cc's mismatch messages, ops/nccl_operations.cc's ErrorCheck and async error, the Python runner,
elastic driver and gloo KV store's raises); TensorFlow distributed (base_collective_executor.cc,
collective_param_resolver_local.cc, nccl_manager.cc, grpc_server_lib.cc, eager_service_impl.cc's
GetServerContext, MultiWorkerMirroredStrategy's TF_CONFIG checks and INFO lines, gRPC's status records);
the XLA/TSL coordination service (coordination_service.cc of TF 2.9-2.15 and xla/tsl: heartbeat staleness,
RegisterTask, the incarnation checks, Stop(); jaxlib's client.cc termination lines); Ray Train/Tune wrappers
(RayTaskError(...), RayActorError / ActorDiedError, WorkerCrashedError, NodeDiedError, raylet's worker and
node deaths, TrainingFailedError, Ray Train v2's WorkerGroupError); Paddle's
launch (launch_utils.py) and NCCL errors; ps-lite (dmlc/ps-lite src/van.cc, zmq_van.h) as MXNet and BytePS
print it. DeepSpeed's comm layer and Megatron-LM / NeMo print torch's c10d and NCCL messages (r1-r4's
tables), nothing of their own that names a cause.
Messages read: about 160 rendered lines; kept here 149 whose wording the sources print (104 failures - 5
of them too little alone - and 45 no failure); the others were guesses at wordings the sources do not print.
Before this sweep 4 of the failures were silent (a task that "unexpectedly tried to connect while it is
already in error", the leader's "Unexpected task registered with task_name=", TF's "Unable to find a
context_id matching the specified one ... Perhaps the worker was restarted", PaddlePaddle's
gloo::TimeoutException named without its what() line) and 1 had a wrong class (the coordination leader's
"Stopping coordination service as heartbeat has timed out for <task>", read as a rendezvous timeout by the
word net); after: 0 silent, 0 wrong.

Families added (rows in existing modules, existing codes):
- the coordination leader losing a running task's heartbeat when it has no channel to the others
  (xla_runtime.py's heartbeat-loss row, RUN133 tier 2, as the propagated "heartbeat timeout");
- a task that registers again after the service set it to ERROR (xla_runtime.py's restarted-task row,
  RUN312 tier 1, with "different incarnation" and "Incarnation ID mismatch");
- a task outside the configured cluster registering (coordination_service.py's settings row, RUN224);
- a TensorFlow worker that no longer knows the client's eager context, in both wordings (tf_peer_health.py,
  RUN312 tier 1: the worker was restarted);
- PaddlePaddle's gloo::TimeoutException by its type alone (a terminate line cut before what(), a title)
  (gloo_errors.py, RUN153 tier 1, with the pair's TIMEOUT line it belongs to); code that catches it and a
  line naming the timeout setting stay silent.

Readings kept as the project had them (the corpus agrees): Horovod's "Horovod has been shut down" is read
as the ranks falling out of step (RUN201: five released threads are labelled so); a gloo or ps-lite connect
refused at start-up, and TF's "failed to connect to all addresses", are transport failures (nccl_network) or
the meeting, both accepted; Horovod's and TF's "unhandled cuda error" from NCCL are the driver or NCCL's CUDA
call. Left silent on purpose: Open MPI's "1 process returned a non-zero exit code" and Ray's
TrainingFailedError (the cause is above them), the agent's "Polled an error from coordination service" (the
error follows it), Horovod elastic's "No hosts from previous set remaining" (which host failed is elsewhere),
TF's "StartAbort Out of range: End of sequence" (four released decoys hold it).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, root_category, root_finding

KILLED = ("host_oom", "process_crash")  # the corpus' process_killed class
NET_OR_KILLED = ("nccl_network", *KILLED)  # a peer lost mid-run: its process died or the link did
MEET_OR_NET = ("rendezvous", "nccl_network")  # a connection refused while the processes meet
RESTARTED = ("rendezvous", *KILLED)  # a member that came back as a new process (RUN312) or its death
DRIVER = ("driver_env", "nccl_usage")  # a CUDA call inside NCCL failed: the driver, or NCCL's CUDA use
TOO_LITTLE = (None, "process_crash")  # an exit that does not say why: the generic exit (RUN133) or silence

FAILURES: list[tuple[str, object]] = [
    # Ray's own deaths (python/ray/exceptions.py, raylet's node detector) and Ray Train v2's wrapper
    (
        "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check "
        "python-core-worker-*.log files for more information.",
        KILLED,
    ),
    (
        "(raylet) The node with node id: 0a1b2c and address: 10.0.0.2 and node name: 10.0.0.2 has "
        "been marked dead "
        "because the detector has missed too many heartbeats from it. This can happen when a (1) "
        "raylet crashes "
        "unexpectedly (OOM, preempted node, etc.) (2) raylet has lagging heartbeats due to slow "
        "network or busy "
        "workload.",
        KILLED,
    ),
    (
        "ray.exceptions.NodeDiedError: Task failed because the node it was running on is dead or "
        "unavailable. Node "
        "IP: 10.0.0.2, node ID: 0a1b2c. This can happen if the instance where the node was running "
        "failed, the node "
        "was preempted, or raylet crashed unexpectedly (e.g., due to OOM) on the node.",
        KILLED,
    ),
    (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this "
        "task.\n\tclass_name: "
        "RayTrainWorker\n\tactor_id: 1234abcd\nThe actor is dead because its node has died. Node Id: 0a1b2c",
        KILLED,
    ),
    (
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\nThe "
        "actor is dead "
        "because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY Worker exit "
        "detail: Task was "
        "killed due to the node running low on memory.",
        KILLED,
    ),
    (
        "ray.train.v2.api.exceptions.WorkerGroupError: Training failed due to worker errors:\n[Rank 0]:\n"
        "Traceback (most recent call last):\ntorch.distributed.DistBackendError: NCCL error in: "
        "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, remote process exited or "
        "there was a "
        "network error, NCCL version 2.21.5",
        "nccl_network",
    ),
    # PaddlePaddle's gloo (third_party/gloo tcp/pair.cc): the abort, its what(), and the type alone
    (
        (
            "terminate called after throwing an instance of 'gloo::TimeoutException'\n  what():  "
            "[/paddle/third_party/gloo/gloo/transport/tcp/pair.cc:587] TIMEOUT self_rank = 0 pair_rank = 1 "
            "peer_str = [172.16.32.105]:36265"
        ),
        "collective_timeout",
    ),
    ("terminate called after throwing an instance of 'gloo::TimeoutException'", "collective_timeout"),
    (
        (
            "[2021-03-04 10:11:12.345678: W /tmp/pip-req-build/horovod/common/stall_inspector.cc:107] One "
            "or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and "
            "are waiting for remainder of ranks for more than 60 seconds. This may indicate that different "
            "ranks are trying to submit different tensors or that only subset of ranks is submitting "
            "tensors, which will cause deadlock. \nMissing ranks:\n0: "
            "[DistributedAdam_Allreduce/cond_1/HorovodAllreduce_grads_1_0]\n1: "
            "[DistributedAdam_Allreduce/cond/HorovodAllreduce_grads_0]"
        ),
        "collective_mismatch",
    ),
    (
        (
            "[1,0]<stderr>:[2021-03-04 10:11:12.345678: W "
            "/tmp/pip-req-build/horovod/common/stall_inspector.cc:107] One or more tensors were submitted "
            "to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
            "ranks for more than 60 seconds. This may indicate that different ranks are trying to submit "
            "different tensors or that only subset of ranks is submitting tensors, which will cause "
            "deadlock."
        ),
        "collective_mismatch",
    ),
    (
        (
            "W horovod/common/stall_inspector.cc:107] One or more tensors were submitted to be reduced, "
            "gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more "
            "than 60 seconds. This may indicate that different ranks are trying to submit different "
            "tensors or that only subset of ranks is submitting tensors, which will cause deadlock. "
            "\nStalled ranks:\n1: [allreduce.noname.12]"
        ),
        "collective_mismatch",
    ),
    (
        (
            "horovod.common.exceptions.HorovodInternalError: Mismatched allreduce tensor shapes: One rank "
            "sent a tensor of shape [1024, 10], but another rank sent a tensor of shape [1024, 12]."
        ),
        "collective_mismatch",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched allreduce tensor "
            "shapes: One rank sent a tensor of shape [64], but another rank sent a tensor of shape [32]."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched data types: One rank had type float32, but another rank had type "
            "float16."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched MPI operations: One rank did an allreduce, but another rank did an "
            "allgather."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched Horovod operations: One rank did an allreduce, but another rank did "
            "a broadcast."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched allgather tensor shapes: One rank sent a tensor of rank 2, but "
            "another rank sent a tensor of rank 3."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched broadcast root ranks: One rank specified root rank 0, but another "
            "rank specified root rank 1."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched broadcast tensor shapes: One rank sent a tensor of shape [10], but "
            "another rank sent a tensor of shape [11]."
        ),
        "collective_mismatch",
    ),
    (
        (
            "horovod.common.exceptions.HorovodInternalError: Mismatched prescale factors: One rank sent "
            "factor 1, but another rank sent factor 0.5."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched reducescatter tensor shapes: One rank sent a tensor of shape [4, 8], "
            "but another rank sent a tensor of shape [4, 9]."
        ),
        "collective_mismatch",
    ),
    (
        (
            "RuntimeError: Mismatched alltoall tensor shapes: One rank sent a tensor of rank 1, but "
            "another rank sent a tensor of rank 2."
        ),
        "collective_mismatch",
    ),
    (
        (
            "horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused "
            "by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a "
            "tensor after one of the ranks finished execution. If the shutdown was caused by an exception, "
            "you should see the exception in the log before the first shutdown message."
        ),
        "collective_mismatch",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down. This was "
            "caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast "
            "a tensor after one of the ranks finished execution."
        ),
        "collective_mismatch",
    ),
    (
        ("horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled system error"),
        "nccl_network",
    ),
    (
        "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled system error",
        "nccl_network",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnknownError: ncclAllReduce failed: unhandled system "
            "error (run with NCCL_DEBUG=INFO for details)\n\t [[node "
            "DistributedAdam_Allreduce/cond_1/HorovodAllreduce_grads_1_0]]"
        ),
        "nccl_network",
    ),
    (
        (
            "RuntimeError: ncclCommInitRank failed: unhandled system error (run with NCCL_DEBUG=INFO for "
            "details)"
        ),
        "nccl_network",
    ),
    ("horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled cuda error", DRIVER),
    ("RuntimeError: NCCL error: unhandled system error, NCCL version 2.7.8", "nccl_network"),
    (
        (
            "[2021-01-01 00:00:00.000: E horovod/common/operations.cc:650] Horovod background loop "
            "uncaught exception: [/tmp/pip-install-1/gloo/gloo/transport/tcp/pair.cc:589] Read error "
            "[10.0.0.2]:45123: Connection reset by peer"
        ),
        "nccl_network",
    ),
    (
        (
            "terminate called after throwing an instance of 'gloo::IoException'\n  what():  "
            "[/tmp/pip-install/horovod/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error "
            "[10.0.0.2]:45123: Connection reset by peer"
        ),
        "nccl_network",
    ),
    (
        (
            "horovod.common.exceptions.HorovodInternalError: gloo::IoException: "
            "[/tmp/gloo/gloo/transport/tcp/unbound_buffer.cc:84] Timed out waiting 30000ms for recv "
            "operation to complete"
        ),
        "collective_timeout",
    ),
    (
        (
            "RuntimeError: Timed out waiting for tasks to start. Please check connectivity between "
            "servers. You may need to increase the --start-timeout parameter if you have too many servers."
        ),
        "rendezvous",
    ),
    (
        (
            "Exception: Timed out waiting for driver service to start. Please check connectivity between "
            "servers. You may need to increase the --start-timeout parameter if you have too many servers."
        ),
        "rendezvous",
    ),
    (
        (
            "horovodrun: Timed out waiting for tasks to start. Please check connectivity between servers. "
            "You may need to increase the --start-timeout parameter if you have too many servers. Timeout "
            "after 30 seconds."
        ),
        "rendezvous",
    ),
    (
        (
            "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n  what():  [enforce "
            "fail at /tmp/horovod/third_party/gloo/gloo/transport/tcp/device.cc:208] ifa != nullptr. "
            "Unable to find interface for: eth1"
        ),
        MEET_OR_NET,
    ),
    ("RuntimeError: Horovod was unable to connect to the coordinator", "rendezvous"),
    (
        (
            "Primary job  terminated normally, but 1 process returned\na non-zero exit code. Per "
            "user-direction, the job has been aborted."
        ),
        TOO_LITTLE,
    ),
    ("mpirun noticed that process rank 3 with PID 0 on node worker-1 exited on signal 9 (Killed).", KILLED),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: failed to connect to all addresses",
        MEET_OR_NET,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: failed to connect to all "
            "addresses\nAdditional GRPC error information from remote target "
            '/job:worker/replica:0/task:1:\n:{"created":"@1612345678.123","description":"Failed to '
            "pick "
            'subchannel","file":"external/com_github_grpc_grpc/src/core/ext/filters/client_channel/'
            'client_channel.cc","file_line":4143,"referenced_errors":[{"description":"failed '
            'to connect to all addresses"}]}'
        ),
        MEET_OR_NET,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\nAdditional GRPC "
            "error information from remote target "
            '/job:worker/replica:0/task:1:\n:{"created":"@1612345678.123","description":"Error '
            "received from peer "
            'ipv4:10.0.0.2:2222","file":"external/com_github_grpc_grpc/src/core/lib/surface/call.cc'
            '","file_line":1056,"grpc_message":"Socket '
            'closed","grpc_status":14}'
        ),
        NET_OR_KILLED,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: [_Derived_]Collective ops is "
            "aborted by: Socket closed\nThe error could be from a previous operation. Restart your program "
            "to reset.\n\t [[{{node CollectiveReduceV2}}]] [Op:__inference_train_function_5678]"
        ),
        NET_OR_KILLED,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out "
            "during execution."
        ),
        "collective_timeout",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out "
            "waiting for other workers."
        ),
        "collective_timeout",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.DeadlineExceededError: [_Derived_]Collective ops is "
            "aborted by: Deadline Exceeded\nThe error could be from a previous operation. Restart your "
            "program to reset."
        ),
        "collective_timeout",
    ),
    (
        (
            "2021-06-01 12:00:00.000000: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
            "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Collective has timed out during "
            "execution."
        ),
        "collective_timeout",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: Unable to find a context_id "
            "matching the specified one (1234567890). Perhaps the worker was restarted, or the context was "
            "GC'd?"
        ),
        RESTARTED,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: The following tasks are unhealthy "
            "(stopped sending heartbeats):\n/job:worker/replica:0/task:1\nCheck the task logs for an "
            "earlier error to debug further."
        ),
        KILLED,
    ),
    (
        (
            "2021-06-01 12:00:00.000000: E tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:519] "
            "UNKNOWN: Could not start gRPC server"
        ),
        "rendezvous",
    ),
    ("tensorflow.python.framework.errors_impl.UnknownError: Could not start gRPC server", "rendezvous"),
    ("ValueError: If `cluster_spec` is given in TF_CONFIG, task type and index must be set.", "rendezvous"),
    (
        (
            "tensorflow.python.framework.errors_impl.InternalError: NCCL: unhandled system error. Set "
            "NCCL_DEBUG=WARN for detail."
        ),
        "nccl_network",
    ),
    (
        (
            "2021-06-01 12:00:00.000000: E tensorflow/core/nccl/nccl_manager.cc:707] NCCL: unhandled "
            "system error. Set NCCL_DEBUG=WARN for detail."
        ),
        "nccl_network",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.InternalError: NCCL: unhandled system error\n\t "
            "[[{{node CollectiveReduceV2}}]] [Op:__inference_train_function_1234]"
        ),
        "nccl_network",
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.InternalError: NCCL: unhandled cuda error. Set "
            "NCCL_DEBUG=WARN for detail."
        ),
        DRIVER,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.InternalError: NCCL: remote process exited or there "
            "was a network error. Set NCCL_DEBUG=WARN for detail."
        ),
        "nccl_network",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: The following tasks are unhealthy (stopped "
            "sending heartbeats):\n/job:jax_worker/replica:0/task:1\nThe tasks have crashed. Check the "
            "task logs for an earlier error to debug further."
        ),
        KILLED,
    ),
    (
        (
            "F0101 00:00:00.000000  1234 client.cc:109] Terminating process because the coordinator "
            "detected missing heartbeats. This most likely indicates that another task died; see the other "
            "task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all "
            "the previous output. absl::Status: DEADLINE_EXCEEDED: Task /job:jax_worker/replica:0/task:1 "
            "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed "
            "unexpectedly. Check the task logs for an earlier error to debug further."
        ),
        KILLED,
    ),
    (
        (
            "F0101 00:00:00.000000  1234 client.cc:97] Terminating process because the JAX distributed "
            "service detected fatal errors. This most likely indicates that another task died; see the "
            "other task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to "
            "see all the previous output. absl::Status: UNAVAILABLE: failed to connect to all addresses; "
            "last error: UNKNOWN: ipv4:10.0.0.1:1234: Failed to connect to remote host: Connection refused"
        ),
        KILLED,
    ),
    (
        (
            "E0101 00:00:00.000000 1234 coordination_service_agent.cc:332] Polled an error from "
            "coordination service (this can be an error from this or another task)."
        ),
        TOO_LITTLE,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
            "PjRT_Client_Connect. Timed out task names:\n/job:jax_worker/replica:0/task:3\n"
        ),
        "rendezvous",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: "
            "PjRT_Client_Connect::0. This usually happens because a task triggered the barrier too early "
            "or too slowly. Please look at the task logs (both timed out and first task) to debug "
            "further.\n# of tasks that reached the barrier: 3/4.\nThe first task at the barrier: "
            "/job:jax_worker/replica:0/task:0. Some timed out task names:\n/job:jax_worker/replica:0/task:3"
        ),
        "rendezvous",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\nAdditional GRPC "
            "error information from remote target unknown_target_for_coordination_leader while calling "
            "/tensorflow.CoordinationService/RegisterTask:"
        ),
        "rendezvous",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: Failed to connect to coordination service. "
            "... RegisterTask"
        ),
        "rendezvous",
    ),
    (
        (
            "E0101 00:00:00.000000 1234 coordination_service_agent.cc:... Failed to connect to "
            "coordination service: DEADLINE_EXCEEDED"
        ),
        "rendezvous",
    ),
    (
        "jax.errors.JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect::0.",
        "rendezvous",
    ),
    ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.", KILLED),
    (
        (
            "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this "
            "task.\n\tclass_name: RayTrainWorker\n\tactor_id: 1234abcd\n\tpid: 4567\n\tnamespace: "
            "abc\n\tip: 10.0.0.2\nThe actor is dead because its worker process has died. Worker exit type: "
            "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. "
            "End of file. There are some potential root causes. (1) The process is killed by SIGKILL by "
            "OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is "
            "crashed unexpectedly due to SIGSEGV or other unexpected errors."
        ),
        KILLED,
    ),
    ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.", KILLED),
    (
        (
            "(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
            "troubleshoot the problem, check the logs for the dead worker. RayTask ID: abc Worker ID: def "
            "Node ID: ghi Worker IP address: 10.0.0.2 Worker port: 10003 Worker PID: 1234 Worker exit "
            "type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code "
            "2. End of file."
        ),
        KILLED,
    ),
    (
        (
            "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next() "
            "(pid=1234, ip=10.0.0.2, actor_id=abcd, repr=<ray.train._internal.worker_group.RayTrainWorker "
            "object at 0x7f>)\ntorch.distributed.DistBackendError: [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
            "Timeout(ms)=1800000) ran for 1800089 milliseconds before timing out."
        ),
        "collective_timeout",
    ),
    (
        (
            "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next() "
            "(pid=1234, ip=10.0.0.2, actor_id=abcd, repr=<ray.train._internal.worker_group.RayTrainWorker "
            "object at 0x7f>)\ntorch.distributed.DistBackendError: NCCL error in: "
            "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error (run with "
            "NCCL_DEBUG=INFO for details), NCCL version 2.18.1"
        ),
        "nccl_network",
    ),
    (
        (
            "ray.exceptions.RayTaskError(DistStoreError): ray::_RayTrainWorker__execute.get_next() "
            "(pid=1234, ip=10.0.0.2)\ntorch.distributed.DistStoreError: Timed out after 1801 seconds "
            "waiting for clients. 1/2 clients joined."
        ),
        "rendezvous",
    ),
    (
        (
            "ray.exceptions.RayTaskError(RuntimeError): ray::RayTrainWorker._RayTrainWorker__execute() "
            "(pid=1234, ip=10.0.0.2)\nRuntimeError: NCCL error in: "
            "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL "
            "version 2.14.3"
        ),
        "nccl_network",
    ),
    (
        (
            "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the "
            "previous error messages for a cause. After fixing the issue (assuming that the error is not "
            "caused by your own application logic, but rather an error such as OOM), you can restart the "
            "run from scratch or continue this run.\nTo continue this run, you can use: `trainer = "
            'TorchTrainer.restore("/tmp/ray_results/TorchTrainer_2023")`.'
        ),
        TOO_LITTLE,
    ),
    (
        (
            "ERROR 2022-01-01 00:00:00,000 launch_utils.py:642] ABORT!!! Out of all 4 trainers, the "
            "trainer process with rank=[1] was aborted. Please check its log."
        ),
        TOO_LITTLE,
    ),
    (
        (
            "OSError: (External) NCCL error(2), unhandled system error.\n  [Hint: 'ncclSystemError'. A "
            "call failed. ...] (at /paddle/paddle/fluid/platform/device/gpu/nccl_helper.h:...)"
        ),
        "nccl_network",
    ),
    ("[12:00:00] src/van.cc:369: Check failed: (my_node_.port) != (-1) bind failed", "rendezvous"),
    (
        (
            "[2021-03-04 10:20:00.000000: E /tmp/pip-req-build/horovod/common/stall_inspector.cc:105] One "
            "or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and "
            "are waiting for remainder of ranks for more than 60 seconds. This may indicate that different "
            "ranks are trying to submit different tensors or that only subset of ranks is submitting "
            "tensors, which will cause deadlock. \nMissing ranks:\n1!: [allreduce.noname.12]\nOne or more "
            'rank (marked by "!") is stalled for longer than 300 seconds. Will shutdown.'
        ),
        "collective_mismatch",
    ),
    (
        'One or more rank (marked by "!") is stalled for longer than 300 seconds. Will shutdown.',
        "collective_mismatch",
    ),
    (
        (
            '[1,0]<stderr>:One or more rank (marked by "!") is stalled for longer than 120 seconds. Will '
            "shutdown."
        ),
        "collective_mismatch",
    ),
    (
        "horovod.common.exceptions.HorovodInternalError: NCCL async error: unhandled system error",
        "nccl_network",
    ),
    ("RuntimeError: NCCL async error: remote process exited or there was a network error", "nccl_network"),
    (
        (
            "[2022-01-01 00:00:00.000: E horovod/common/operations.cc:697] Horovod background loop "
            "uncaught exception: NCCL async error: unhandled system error"
        ),
        "nccl_network",
    ),
    (
        (
            "[2022-01-01 00:00:00.000: E horovod/common/operations.cc:681] Horovod could not be "
            "initialized: [/tmp/horovod/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
            "[10.0.0.2]:35127: Connection refused"
        ),
        MEET_OR_NET,
    ),
    (
        (
            "[2022-01-01 00:00:00.000: E horovod/common/operations.cc:681] Horovod could not be "
            "initialized: [/tmp/horovod/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
            "[10.0.0.2]:35127: Connection timed out"
        ),
        MEET_OR_NET,
    ),
    ("RuntimeError: No hosts from previous set remaining, unable to broadcast state.", TOO_LITTLE),
    (
        (
            "E0101 00:00:00.000000 1234 coordination_service.cc:520] Stopping coordination service as "
            "heartbeat has timed out for /job:jax_worker/replica:0/task:1 and there is no "
            "service-to-client connection"
        ),
        KILLED,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: Task /job:jax_worker/replica:0/task:1 "
            "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed "
            "unexpectedly."
        ),
        KILLED,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.UnavailableError: Task /job:worker/replica:0/task:1 "
            "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed "
            "unexpectedly. [type.googleapis.com/tensorflow.CoordinationServiceError='']"
        ),
        KILLED,
    ),
    (
        (
            "E0101 00:00:00.000000 1234 coordination_service.cc:1082] /job:worker/replica:0/task:1 has "
            "been set to ERROR in coordination service: UNAVAILABLE: Task /job:worker/replica:0/task:1 "
            "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed "
            "unexpectedly. [type.googleapis.com/tensorflow.CoordinationServiceError='']"
        ),
        KILLED,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: ABORTED: Incarnation ID mismatch: expecting 123 but got "
            "456. This means the remote task has restarted."
        ),
        RESTARTED,
    ),
    (
        (
            "E0101 00:00:00.000000 1234 coordination_service.cc:300] /job:jax_worker/replica:0/task:2 "
            "unexpectedly tried to connect with a different incarnation. It has likely restarted."
        ),
        RESTARTED,
    ),
    (
        (
            "E0101 00:00:00.000000 1234 coordination_service.cc:300] /job:jax_worker/replica:0/task:2 "
            "unexpectedly tried to connect while it is already in error. ResetTask() should be called "
            "before a subsequent connect attempt."
        ),
        RESTARTED,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Unexpected task registered with "
            "task_name=/job:jax_worker/replica:0/task:4"
        ),
        "rendezvous",
    ),
    (
        (
            "F0101 00:00:00.000000  1234 client.cc:109] Terminating process because the coordinator "
            "detected missing heartbeats. This most likely indicates that another task died; see the other "
            "task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all "
            "the previous output. absl::Status: UNAVAILABLE: Task /job:jax_worker/replica:0/task:1 "
            "heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed "
            "unexpectedly."
        ),
        KILLED,
    ),
    ("[05:34:38] src/van.cc:297: Check failed: !ip.empty() failed to get ip", "rendezvous"),
    ("[05:34:38] src/van.cc:292: Check failed: !interface.empty() failed to get the interface", "rendezvous"),
    ("[05:34:38] src/van.cc:298: Check failed: port failed to get a port", "rendezvous"),
    (
        "[05:34:38] src/./zmq_van.h:126: connect to tcp://10.0.0.1:9091 failed: Connection refused",
        MEET_OR_NET,
    ),
    (
        (
            "terminate called after throwing an instance of 'dmlc::Error'\n  what():  [05:34:38] "
            "src/./zmq_van.h:126: connect to tcp://10.0.0.1:9091 failed: No route to host"
        ),
        MEET_OR_NET,
    ),
    (
        (
            "[05:34:38] src/./zmq_van.h:168: failed to send message to node [9] errno: 104 Connection "
            "reset by peer. 0/3"
        ),
        NET_OR_KILLED,
    ),
]

SILENT: list[str] = [
    "ray.exceptions.GetTimeoutError: Get timed out: some object(s) not ready.",
    "(RayTrainWorker pid=1234) [W1206 12:00:00.000 ProcessGroupNCCL.cpp:4561] Warning: "
    "TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect for point-to-point collectives.",
    "2023-01-01 00:00:00,000 INFO worker.py:1621 -- Started a local Ray instance.",
    "(autoscaler +1m) Tip: use `ray status` to view detailed cluster status. To disable these messages, set "
    "RAY_SCHEDULER_EVENTS=0.",
    "(autoscaler +1m) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0, "
    "'CPU': 1.0}. This is likely due to all cluster resources being claimed by actors.",
    "[1,0]<stdout>:Epoch 1/10 - loss: 0.342",
    "horovod/common/operations.cc:560] Started Horovod with 8 processes",
    (
        "[2021-01-01 00:00:00.000: W horovod/common/operations.cc:721] Timeline already enabled, "
        "ignoring HOROVOD_TIMELINE"
    ),
    (
        "HOROVOD_STALL_CHECK_TIME_SECONDS=60 HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=300 horovodrun -np 4 "
        "python train.py"
    ),
    (
        "  --start-timeout START_TIMEOUT  Horovodrun has to perform all the checks and start the "
        "processes before the specified timeout."
    ),
    ("Checking whether extension tensorflow was built with MPI.\nExtension tensorflow was built with MPI."),
    (
        "[0]<stderr>:[2021-01-01 00:00:00.000: W horovod/common/stall_inspector.cc:107] "
        "HOROVOD_STALL_CHECK_DISABLE set, stall inspector disabled"
    ),
    "INFO:tensorflow:Waiting for the cluster, timeout = inf",
    "INFO:tensorflow:Cluster is ready.",
    (
        "INFO:tensorflow:MultiWorkerMirroredStrategy with cluster_spec = {'worker': ['10.0.0.1:2222', "
        "'10.0.0.2:2222']}, task_type = 'worker', task_id = 0, num_workers = 2, local_devices = "
        "('/job:worker/task:0/device:GPU:0',), communication = CommunicationImplementation.NCCL"
    ),
    (
        "2021-06-01 12:00:00.000000: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:476] "
        "Started server with target: grpc://10.0.0.1:2222"
    ),
    (
        "2021-06-01 12:00:00.000000: I "
        "tensorflow/core/distributed_runtime/coordination/coordination_service_agent.cc:277] "
        "Coordination agent has successfully connected."
    ),
    (
        "2021-06-01 12:00:00.000000: W tensorflow/core/common_runtime/eager/context.cc:... Unable to "
        "destroy server_ object, so releasing instead. Servers don't support clean shutdown."
    ),
    (
        "INFO:tensorflow:Collective all_reduce tensors: 6 all_reduces, num_devices = 2, group_size = "
        "2, implementation = CommunicationImplementation.NCCL, num_packs = 1"
    ),
    (
        "2021-06-01 12:00:00.000000: W tensorflow/core/grappler/optimizers/data/auto_shard.cc:695] "
        "AUTO sharding policy will apply DATA sharding policy as it failed to apply FILE sharding "
        "policy because of the following reason: Found an unshardable source dataset"
    ),
    "tf.distribute.experimental.CommunicationOptions(timeout_seconds=600)",
    (
        "I0101 00:00:00.000000 1234 coordination_service_agent.cc:... Coordination agent has "
        "successfully connected."
    ),
    "INFO:absl:Connecting to JAX distributed service on 10.0.0.1:1234",
    ('jax.distributed.initialize(coordinator_address="10.0.0.1:1234", num_processes=4, process_id=0)'),
    (
        "I0101 00:00:00.000000 1234 coordination_service.cc:... /job:jax_worker/replica:0/task:1 has "
        "connected to coordination service. Incarnation: 12345"
    ),
    "I0101 00:00:00.000000 1234 coordination_service.cc:... Initializing CoordinationService",
    "I0101 00:00:00.000000 1234 distributed.py:... Starting JAX distributed service on [::]:1234",
    "I0101 00:00:00.000000 1234 coordination_service_agent.cc:... Coordination agent shutdown",
    "(RayTrainWorker pid=1234) Setting up process group for: env:// [rank=0, world_size=2]",
    "(TorchTrainer pid=1234) Started distributed worker processes:",
    (
        "== Status ==\nCurrent time: 2023-01-01 00:00:00 (running for 00:01:00.00)\nMemory usage on "
        "this node: 12.3/62.0 GiB"
    ),
    (
        "Trial TorchTrainer_abc completed after 10 iterations at 2023-01-01 00:00:00. Total running "
        "time: 1min 0s"
    ),
    "[12:00:00] src/van.cc:290: Bind to role=worker, ip=10.0.0.2, port=38123, is_recovery=0",
    "[12:00:00] src/van.cc:... S[8] is connected to others",
    "BytePS launching worker",
    "[2022-01-01 00:00:00.000: I horovod/common/operations.cc:700] Horovod initialized",
    (
        "[2022-01-01 00:00:00.000: W horovod/common/stall_inspector.cc:37] "
        "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS is less than HOROVOD_STALL_CHECK_TIME_SECONDS, will not "
        "shutdown."
    ),
    "ValueError: Horovod is shutting down.",
    "RuntimeError: Job has been shutdown, see above error messages for details.",
    (
        "I0101 00:00:00.000000 1234 coordination_service.cc:400] /job:jax_worker/replica:0/task:1 has "
        "disconnected from coordination service."
    ),
    (
        "I0101 00:00:00.000000 1234 coordination_service.cc:300] /job:jax_worker/replica:0/task:2 has "
        "connected to coordination service with the same incarnation again: 1234"
    ),
    "heartbeat_timeout_seconds=100 in jax.distributed.initialize",
    "[05:34:38] src/./zmq_van.h:138: there is no socket to node 9",
    "[05:34:38] src/van.cc:122: W[9]: Timeout to get the ACK message. Resend (retry=1) msg: ...",
    "[05:34:38] src/postoffice.cc:... Duplicated message: ...",
]


@pytest.mark.parametrize("line,want", FAILURES)
def test_sweep_failures_get_their_class(line: str, want: object) -> None:
    got = root_category(line)
    assert got in (want if isinstance(want, tuple) else (want,)), (line, got)


@pytest.mark.parametrize("line", SILENT)
def test_sweep_benign_lines_stay_silent(line: str) -> None:
    assert root_category(line) is None, line


_NEW = [
    (
        "E0101 00:00:00.000000 1234 coordination_service.cc:520] Stopping coordination service as "
        "heartbeat has "
        "timed out for /job:jax_worker/replica:0/task:1 and there is no service-to-client connection",
        "RUN133",
    ),
    (
        "E0101 00:00:00.000000 1234 coordination_service.cc:300] /job:jax_worker/replica:0/task:2 "
        "unexpectedly "
        "tried to connect while it is already in error. ResetTask() should be called before a subsequent "
        "connect attempt.",
        "RUN312",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Unexpected task registered with "
        "task_name=/job:jax_worker/replica:0/task:4",
        "RUN224",
    ),
    (
        "tensorflow.python.framework.errors_impl.AbortedError: Unable to find a context_id matching "
        "the specified "
        "one (8675309). Perhaps the worker was restarted, or the context was GC'd?",
        "RUN312",
    ),
    (
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Unable to find a context_id "
        "matching the "
        "specified one (-123). Perhaps the worker was restarted?",
        "RUN312",
    ),
    ("terminate called after throwing an instance of 'gloo::TimeoutException'", "RUN153"),
    ("paddle.distributed.launch 进行多核训练时，超过两天会报gloo::TimeoutException，然后退出", "RUN153"),
]


@pytest.mark.parametrize("prefix", [*LAUNCHER_PREFIXES, "2025-01-02T03:04:05.678 "])
@pytest.mark.parametrize("line,code", _NEW)
def test_new_family_rows_behind_every_prefix(prefix: str, line: str, code: str) -> None:
    log = "\n".join(prefix + ln for ln in line.split("\n"))
    f = root_finding(log)
    assert f is not None and f.code == code, (log, f)


# Lines that share the new rows' words and are no failure (or not this one): each stays silent.
NEAR_MISSES = [
    "I0101 00:00:00.000000 1234 coordination_service.cc:900] Stopping coordination service",
    "I0101 00:00:00.000000 1234 coordination_service_agent.cc:400] Coordination agent has initiated "
    "Shutdown().",
    "I0101 00:00:00.000000 1234 coordination_service.cc:400] /job:jax_worker/replica:0/task:2 has "
    "disconnected "
    "from coordination service.",
    "I0101 00:00:00.000000 1234 coordination_service.cc:300] /job:jax_worker/replica:0/task:2 has "
    "connected to "
    "coordination service with the same incarnation again: 1234",
    "DEBUG registering task /job:jax_worker/replica:0/task:4 with the coordination service (expected)",
    "I0101 tensorflow/core/distributed_runtime/eager/eager_service_impl.cc:300] Creating context_id "
    "1234567890 on "
    "/job:worker/replica:0/task:1",
    "  } catch (gloo::TimeoutException& e) {",
    "How to catch gloo::TimeoutException in python?",
    "except gloo::TimeoutException as e: retry",
    "HOROVOD_GLOO_TIMEOUT_SECONDS=60 is the gloo::TimeoutException deadline",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_category(line) is None, line


def test_coordination_heartbeat_stop_names_the_task() -> None:
    f = root_finding(
        "E0101 00:00:00.000000 1234 coordination_service.cc:520] Stopping coordination service as "
        "heartbeat has "
        "timed out for /job:jax_worker/replica:0/task:3 and there is no service-to-client connection"
    )
    assert f is not None and f.facts.get("ranks") == [3] and f.facts.get("problem") == "peer_task_died", f


def test_gloo_timeout_type_yields_to_the_pair_line() -> None:
    log = (
        "terminate called after throwing an instance of 'gloo::TimeoutException'\n"
        "  what():  [/paddle/third_party/gloo/gloo/transport/tcp/pair.cc:587] TIMEOUT self_rank = 0 "
        "pair_rank = 1 "
        "peer_str = [172.16.32.105]:36265\n"
    )
    f = root_finding(log)
    assert f is not None and f.code == "RUN153", f
