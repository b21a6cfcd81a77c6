"""Containers, Kubernetes and managed training services around a GPU job (rules/cloud_jobs.py), read at
their sources:

- libnvidia-container src/cli/configure.c (1.x): "permission error: %s", "requirement error: %s" with
  dsl.c's "unsatisfied condition: driver>=470" / "brand = tesla" / "arch >= 7.0" (cuda>= is driver_stack's);
  nvidia-container-toolkit cmd/nvidia-container-runtime-hook/hook_config.go ("invoking the NVIDIA Container
  Runtime Hook directly ... is not supported") and main.go ("couldn't find binary nvidia-container-cli in
  PATH"); crun's hook failure; CDI's "unresolvable CDI devices" (podman, Docker 25+, the toolkit's
  internal/modifier/cdi/registry.go "failed to inject CDI devices"); moby's "could not select device driver
  ... with capabilities", "unknown or invalid runtime name"; containerd's CRI "no runtime for \"nvidia\" is
  configured"; k8s-device-plugin's "Incompatible strategy detected" / "did you configure the NVIDIA Container
  Toolkit?": RUN262 (RUN261 for a driver requirement).
- kube-scheduler noderesources/fit.go "Insufficient %v" in FailedScheduling, Ray's autoscaler "No available
  node types can fulfill resource request": RUN390. kubectl describe's Terminated / Reason / Exit Code, get
  pods' CrashLoopBackOff, the kubelet's back-off and the job controller's backoff limit: RUN133 (RUN131 for a
  fatal signal's status).
- sagemaker-training-toolkit 4.7.0 errors.py / process.py ("ExecuteUserScriptError:\nExitCode N\n
  ErrorMessage ...", ExtraInfo "OutOfMemory" on 137), the SDK's UnexpectedStatusException flattening, Vertex
  AI's "The replica ... exited with a non-zero status of N(SIG)", ECS/Batch "OutOfMemoryError: Container
  killed due to memory usage", Azure ML's "User process '...' exited with status code N".
- torch/utils/data/dataloader.py "Too many open files. Communication with the workers is no longer
  possible" and a write into a full /dev/shm: RUN388.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import prefixed

CASES = [
    (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: permission error: capability change failed: operation not permitted: unknown.",
        "RUN262",
        {"reason": "container_cli_permission"},
    ),
    (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: driver>=470, please update your driver to a newer version, or use an earlier cuda container: unknown.",
        "RUN261",
        {"reason": "container_driver_requirement", "required_driver": "470"},
    ),
    (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: brand = tesla: unknown.",
        "RUN262",
        {"reason": "container_requirement", "condition": "brand = tesla"},
    ),
    (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: arch >= 7.0: unknown.",
        "RUN262",
        {"reason": "container_requirement", "condition": "arch >= 7.0"},
    ),
    (
        'Error response from daemon: could not select device driver "" with capabilities: [[compute utility]]',
        "RUN262",
        {"reason": "no_container_gpu_driver"},
    ),
    (
        "docker: Error response from daemon: unknown or invalid runtime name: nvidia.\nSee 'docker run --help'.",
        "RUN262",
        {"reason": "runtime_not_configured"},
    ),
    (
        'Error: failed to create containerd task: failed to get sandbox runtime: no runtime for "nvidia" is configured',
        "RUN262",
        {"reason": "runtime_not_configured"},
    ),
    (
        '  Warning  FailedCreatePodSandBox  3s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
        "RUN262",
        {"reason": "runtime_not_configured"},
    ),
    (
        'Failed to create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler "nvidia" not supported',
        "RUN262",
        {"reason": "runtime_not_configured"},
    ),
    (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.: unknown.",
        "RUN262",
        {"reason": "hook_invoked_directly"},
    ),
    (
        "Error: crun: error executing hook `/usr/bin/nvidia-container-toolkit` (exit code: 1): OCI runtime error",
        "RUN262",
        {"reason": "container_hook_failed"},
    ),
    (
        "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",
        "RUN262",
        {"reason": "cdi_spec_missing"},
    ),
    (
        "docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=all.",
        "RUN262",
        {"reason": "cdi_spec_missing"},
    ),
    (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-runtime-hook: couldn't find binary nvidia-container-cli in PATH",
        "RUN262",
        {"reason": "container_cli_missing"},
    ),
    (
        "Name:         trainer-worker-0\nNamespace:    default\nStatus:       Running\nContainers:\n  pytorch:\n    Image:          nvcr.io/nvidia/pytorch:24.01-py3\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n      Started:      Mon, 01 Jan 2024 10:00:00 +0000\n      Finished:     Mon, 01 Jan 2024 10:05:00 +0000\n    Ready:          False\n    Restart Count:  4\n    Limits:\n      memory:          64Gi\n      nvidia.com/gpu:  8\nEvents:\n  Type     Reason   Age                 From     Message\n  ----     ------   ----                ----     -------\n  Warning  BackOff  2m (x20 over 10m)   kubelet  Back-off restarting failed container pytorch in pod trainer-worker-0_default(1234)\n",
        "RUN133",
        {"exit_code": 1, "platform": "kubernetes"},
    ),
    (
        "Name:         trainer-worker-0\nNamespace:    default\nStatus:       Running\nContainers:\n  pytorch:\n    Image:          nvcr.io/nvidia/pytorch:24.01-py3\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    143\n      Started:      Mon, 01 Jan 2024 10:00:00 +0000\n      Finished:     Mon, 01 Jan 2024 10:05:00 +0000\n    Ready:          False\n    Restart Count:  4\n    Limits:\n      memory:          64Gi\n      nvidia.com/gpu:  8\nEvents:\n  Type     Reason   Age                 From     Message\n  ----     ------   ----                ----     -------\n  Warning  BackOff  2m (x20 over 10m)   kubelet  Back-off restarting failed container pytorch in pod trainer-worker-0_default(1234)\n",
        "RUN133",
        {"exit_code": 143, "signal": "SIGTERM"},
    ),
    (
        "NAME               READY   STATUS             RESTARTS      AGE\ntrainer-master-0   0/1     CrashLoopBackOff   5 (30s ago)   12m",
        "RUN133",
        {"platform": "kubernetes"},
    ),
    (
        "  Warning  FailedScheduling  2m  default-scheduler  0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.",
        "RUN390",
        {"reason": "insufficient_resource", "resource": "nvidia.com/gpu"},
    ),
    (
        "Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  10s   default-scheduler  0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu.",
        "RUN390",
        {"reason": "insufficient_resource", "resource": "nvidia.com/gpu"},
    ),
    (
        "I0101 00:00:00.000000       1 main.go:256] Retreiving plugins.\nE0101 00:00:00.000000       1 factory.go:87] Incompatible strategy detected auto\nE0101 00:00:00.000000       1 factory.go:88] If this is a GPU node, did you configure the NVIDIA Container Toolkit?\nE0101 00:00:00.000000       1 factory.go:89] You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites\nI0101 00:00:00.000000       1 main.go:287] No devices found. Waiting indefinitely.",
        "RUN262",
        {"reason": "device_plugin_no_gpu"},
    ),
    (
        "Warning  BackoffLimitExceeded  2m  job-controller  Job has reached the specified backoff limit",
        "RUN133",
        {"platform": "kubernetes"},
    ),
    (
        '2024-03-01 10:11:12,345 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:\nExitCode 1\nErrorMessage ""\nCommand "/opt/conda/bin/python3.10 train.py"',
        "RUN133",
        {"exit_code": 1, "platform": "sagemaker"},
    ),
    (
        'UnexpectedStatusException: Error for Training job xgb-2023: Failed. Reason: AlgorithmError: ExecuteUserScriptError:\nCommand "/miniconda3/bin/python3 -m train", exit code: 1',
        "RUN133",
        {"exit_code": 1, "platform": "sagemaker"},
    ),
    (
        '2024-03-01 10:11:12,345 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:\nExitCode 139\nErrorMessage ""\nCommand "mpirun --host algo-1:8,algo-2:8 -np 16 python train.py"',
        "RUN131",
        {"exit_code": 139, "signal": "SIGSEGV"},
    ),
    (
        "UnexpectedStatusException: Error for Training job my-job: Failed. Reason: ClientError: Please use an instance type with more memory, or reduce the size of training data processed on an instance.",
        "RUN121",
        {"reason": "instance_memory", "platform": "sagemaker"},
    ),
    (
        "The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: Error. To find out more about why your job exited please check the logs: https://console.cloud.google.com/logs/viewer?project=123",
        "RUN133",
        {"exit_code": 1, "platform": "vertex_ai"},
    ),
    (
        "The replica workerpool1-2 exited with a non-zero status of 139(SIGSEGV). To find out more about why your job exited please check the logs",
        "RUN131",
        {"exit_code": 139, "signal": "SIGSEGV"},
    ),
    (
        "google.api_core.exceptions.FailedPrecondition: 400 Job failed. The replica workerpool0-0 exited with a non-zero status of 1.",
        "RUN133",
        {"exit_code": 1, "platform": "vertex_ai"},
    ),
    (
        "statusReason: OutOfMemoryError: Container killed due to memory usage",
        "RUN121",
        {"reason": "container_memory_limit", "signal": "SIGKILL"},
    ),
    (
        '"reason": "OutOfMemoryError: Container killed due to memory usage",\n"exitCode": 137',
        "RUN121",
        {"reason": "container_memory_limit", "signal": "SIGKILL"},
    ),
    (
        "Execution failed. User process '/azureml-envs/azureml_abc/bin/python' exited with status code 1. Please check log file 'user_logs/std_log.txt' for error details. Error: Traceback (most recent call last):",
        "RUN133",
        {"exit_code": 1, "platform": "azure_ml"},
    ),
    (
        "AzureMLCompute job failed.\nJobFailed: Submitted script failed with a non-zero exit code; see the driver log file for details.\n\tReason: Job failed with non-zero exit Code",
        "RUN133",
        {"platform": "azure_ml"},
    ),
    (
        'Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu utility compute]]',
        "RUN262",
        {"reason": "no_container_gpu_driver"},
    ),
    (
        "Error: OCI runtime error: crun: error executing hook `/usr/bin/nvidia-container-toolkit` (exit code: 1)",
        "RUN262",
        {"reason": "container_hook_failed"},
    ),
    (
        "Error: crun: cannot stat `/dev/nvidia0`: No such file or directory: OCI runtime attempted to invoke a command that was not found",
        "RUN262",
        {"reason": "device_node_missing"},
    ),
    (
        "Error: container create failed: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=0",
        "RUN262",
        {"reason": "cdi_spec_missing"},
    ),
    (
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all: unknown.",
        "RUN262",
        {"reason": "cdi_spec_missing"},
    ),
    (
        '[1,mpirank:0,algo-1]<stderr>:Traceback (most recent call last):\n2024-03-01 10:11:12,345 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:\nExitCode 2\nErrorMessage ""\nCommand "torchrun --nnodes 2 --nproc_per_node 8 train.py"',
        "RUN133",
        {"exit_code": 2, "platform": "sagemaker"},
    ),
    (
        "      Reason:       Error\n      Exit Code:    2\n      Started:      Mon, 01 Jan 2024 10:00:00 +0000",
        "RUN133",
        {"exit_code": 2, "platform": "kubernetes"},
    ),
    (
        "    State:          Terminated\n      Reason:       Error\n      Exit Code:    143",
        "RUN133",
        {"exit_code": 143, "signal": "SIGTERM"},
    ),
    (
        "  Warning  FailedScheduling  3m41s (x2 over 8m)  default-scheduler  0/10 nodes are available: 2 Insufficient cpu, 8 Insufficient nvidia.com/gpu. preemption: 0/10 nodes are available: 10 No preemption victims found for incoming pod.",
        "RUN390",
        {"reason": "insufficient_resource", "resource": "nvidia.com/gpu"},
    ),
    (
        "Warning  FailedScheduling  1s  default-scheduler  0/2 nodes are available: 2 Insufficient amd.com/gpu.",
        "RUN390",
        {"reason": "insufficient_resource", "resource": "amd.com/gpu"},
    ),
    (
        "(autoscaler +1m2s) Error: No available node types can fulfill resource request {'GPU': 8.0, 'CPU': 1.0}. Add suitable node types to this cluster to resolve this issue.",
        "RUN390",
        {"reason": "no_node_fits"},
    ),
    (
        "Status reason: OutOfMemoryError: Container killed due to memory usage\nExit code: 137",
        "RUN121",
        {"reason": "container_memory_limit", "signal": "SIGKILL"},
    ),
    (
        "The replica workerpool0-1 exited with a non-zero status of 134(SIGABRT).",
        "RUN131",
        {"exit_code": 134, "signal": "SIGABRT"},
    ),
    (
        "The replica workerpool0-0 exited with a non-zero status of 9(SIGKILL). Termination reason: Error",
        "RUN121",
        {"exit_code": 137, "signal": "SIGKILL"},
    ),
    (
        "OSError: [Errno 28] No space left on device: '/dev/shm/torch_123'",
        "RUN388",
        {"reason": "dev_shm_full"},
    ),
    (
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code",
        "RUN388",
        {"reason": "fd_limit"},
    ),
]


@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_platform_record_names_its_cause(log: str, code: str, facts: dict[str, object]) -> None:
    _check(log, code, facts)


# One-line records as launchers and loggers prefix them.
ONE_LINE = [(t, c, f) for t, c, f in CASES if "\n" not in t]


@pytest.mark.parametrize("prefix", ["[rank0]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - "])
@pytest.mark.parametrize(("log", "code", "facts"), ONE_LINE[::3])
def test_platform_record_behind_a_prefix(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check(prefixed(prefix, log), code, facts)


@pytest.mark.parametrize(
    "log",
    [
        "Exit Code:    0",
        "    State:          Terminated\n      Reason:       Completed\n      Exit Code:    0",
        "NAME               READY   STATUS    RESTARTS   AGE\ntrainer-master-0   1/1     Running   0          12m",
        "0/4 nodes are available: 4 Insufficient cpu.",
        "The replica workerpool0-0 exited with a non-zero status of 0.",
        "ExecuteUserScriptError:\nExitCode 0",
        "docker run --gpus all --device /dev/nvidia0 nvcr.io/nvidia/pytorch:24.01-py3",
    ],
)
def test_healthy_platform_lines_stay_silent(log: str) -> None:
    from tests.helpers.diagnose_root import root_finding

    assert root_finding(log) is None, log
