"""Message families read at their source, round 4 (continues test_diagnose_source_families3.py).

NCCL usage: every WARN text NCCL returns ncclInvalidArgument / ncclInvalidUsage with (misc/argcheck.cc,
init.cc, group.cc, enqueue.cc, 2.4-2.28), raw or under torch's "NCCL error in: ..." with its "Last
error:", and torch's own tensor checks (ProcessGroupNCCL.cpp check_gpu_tensors*). gloo: the pair's
timeouts (tcp/pair.cc, uv/pair.cc "Read timeout" / "Write timeout" / "Send timeout") are timeouts,
its socket failures ("Socket closed" too) network. Killed processes: a runner's record of exit status
137 / SIGKILL with no traceback, and an interactive shell's job table. Each case carries the prefixes
real logs add; decoys with the same words stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LINE_PREFIXES
from tests.helpers.diagnose_root import root_finding as _root

WARN = "node1:1234:5678 [0] misc/argcheck.cc:30 NCCL WARN "


USAGE_WARNS = [
    # misc/argcheck.cc: pointer and operator checks
    "AllReduce : sendbuff 0x7f1234000000 is not a valid pointer",
    "AllGather : recvbuff allocated on device 1 mismatchs with NCCL device 0",
    "Send : buff argument is NULL",
    "Error: corrupted comm object detected",
    "ReduceScatter : invalid reduction operation 9",
    "AllReduce : reduction operation 5 unknown to this communicator",
    "ncclRedOpDestroy : operator is a NCCL builtin.",
    "FP8 reduction support begins with sm90 capable devices.",
    # init.cc: communicator checks
    "comm 0x55d0c1a2b3c0 has already been destroyed",
    "Invalid device count requested : 0",
    "improper usage of ncclCommInitRank: nId = 2, nranks=1",
    "ncclCommGetUniqueId should not be called when NCCL_COMM_ID is set",
    "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER",
    "Invalid config blocking attribute value 2",
    "Invalid config cgaClusterSize attribute value 9",
    # group.cc / enqueue.cc: group and p2p checks
    "ncclGroupEnd: not in a group call.",
    "Trying to send to self without a matching recv",
    "Trying to recv to self without a matching send",
    "peer 9 is not within valid range of ranks 8.",
    "Blocking and nonblocking communicators are not allowed in the same group.",
    "Either none or all communicators in a ncclGroup() can be CUDA graph captured.",
    "Error : mixing different streams within a group call is not supported.",
]


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize("warn", USAGE_WARNS)
def test_nccl_usage_warn_texts_are_usage(prefix: str, warn: str) -> None:
    f = _root(prefix + WARN + warn)
    assert f is not None and f.code == "RUN191" and f.category == "nccl_usage", (warn, f)


@pytest.mark.parametrize("warn", USAGE_WARNS[:6] + USAGE_WARNS[15:19])
def test_nccl_usage_under_torchs_wrapper(warn: str) -> None:
    log = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version "
        "2.19.3\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n" + warn
    )
    f = _root(log)
    assert f is not None and f.category == "nccl_usage", (warn, f)


def test_a_communicator_used_after_abort_is_a_symptom_of_the_abort() -> None:
    # "Comm 0x.. is in abort state" follows the abort: a watchdog timeout in the same log is the cause.
    alone = _root(WARN + "Comm 0x55d0c1a2b3c0 is in abort state")
    assert alone is not None and alone.category == "nccl_usage"
    log = (
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 "
        "milliseconds before timing out.\n" + WARN + "Comm 0x55d0c1a2b3c0 is in abort state"
    )
    f = _root(log)
    assert f is not None and f.category == "collective_timeout", f


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
def test_a_bare_communicator_abort_is_a_weak_timeout(prefix: str) -> None:
    # torch 1.7-1.9 said no more (https://github.com/pytorch/pytorch/pull/64241 added the reason)
    f = _root(prefix + "RuntimeError: NCCL communicator was aborted on rank 1.")
    assert f is not None and f.category == "collective_timeout", f
    # with the reason, the reason decides
    f = _root(
        "RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for failure was: "
        "NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.18.1"
    )
    assert f is not None and f.category == "nccl_usage", f


def test_a_config_filled_by_another_nccl_header_is_its_own_code() -> None:
    # RUN197, NCCL's class as the reference corpora label it (test_corpus.py, LABEL_DECISIONS)
    f = _root(WARN + "Invalid config blocking attribute value -2147483648")
    assert f is not None and f.code == "RUN197" and f.category == "nccl_usage", f


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: Tensors must be non-overlapping and dense",
        "RuntimeError: Tensors must have identical type",
        "RuntimeError: Tensor list mustn't be larger than the number of available GPUs",
        "ValueError: Tensors must be CUDA and dense",
        "ValueError: Cannot use ReduceOp.BAND with NCCL",
        "RuntimeError: ProcessGroupGloo::allgather: requires non-empty input tensor list",
        "RuntimeError: ProcessGroupGloo::broadcast: invalid root rank: 3",
        "RuntimeError: ProcessGroupGloo::allreduce: invalid tensor type at index 0 (expected CPUFloatType, "
        "got CPUHalfType)",
        "RuntimeError: ProcessGroupGloo::scatter: requires empty input on non-root",
        "ValueError: ProcessGroupGloo::allreduce: unsupported device type xpu",
        "RuntimeError: Cannot use ReduceOp.BXOR with NCCL",
        "ValueError: output tensor size must be equal to world_size times input tensor size",
        "ValueError: input tensor must be the same size as output size times world size",
        "TypeError: input tensor must be the same type as the output tensor.",
        "RuntimeError: output tensor must have the same type as input tensor",
        "RuntimeError: Tensor input and output of _reduce_scatter_base must have the same number of elements",
    ],
)
def test_torch_tensor_checks_are_usage(prefix: str, line: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.category == "nccl_usage", (line, f)


# Real lines from public threads.
def test_real_argcheck_invalid_root_from_threads() -> None:
    # https://github.com/NVIDIA/nccl/issues/963
    log = (
        "9306dc444753:248281:248306 [1] misc/argcheck.cc:39 NCCL WARN Recv : invalid root 0 (root should be "
        "in the 0..0 range)\n9306dc444753:248281:248306 [1] NCCL INFO enqueue.cc:1450 -> 4\n"
        "9306dc444753:248281:248306 [1] NCCL INFO group.cc:106 -> 4"
    )
    f = _root(log)
    assert f is not None and f.category == "nccl_usage", f


GLOO = "../third_party/gloo/gloo/transport/"


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize(
    ("line", "category"),
    [
        (f"RuntimeError: [{GLOO}tcp/pair.cc:445] Read timeout [10.0.0.2]:40112", "collective_timeout"),
        (f"RuntimeError: [{GLOO}tcp/pair.cc:316] Write timeout [10.0.0.2]:40112", "collective_timeout"),
        (f"RuntimeError: [{GLOO}uv/pair.cc:290] Send timeout [10.0.0.2]:40112", "collective_timeout"),
        (
            f"RuntimeError: [{GLOO}tcp/unbound_buffer.cc:84] Timed out waiting 1800000ms for recv operation "
            "to complete",
            "collective_timeout",
        ),
        (f"RuntimeError: [{GLOO}uv/pair.cc:333] Socket closed [10.0.0.9]:1234", "nccl_network"),
        (f"RuntimeError: [{GLOO}tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:23456", "nccl_network"),
        (
            f"RuntimeError: [{GLOO}tcp/pair.cc:575] Read error [172.17.0.2]:50112: Connection reset by peer",
            "nccl_network",
        ),
        (f"RuntimeError: [{GLOO}tcp/pair.cc:868] Connect timeout [10.1.1.4]:48235", "nccl_network"),
        (f"RuntimeError: Gloo connectFullMesh failed with [{GLOO}tcp/pair.cc:144] no error", "nccl_network"),
    ],
)
def test_gloo_pair_families(prefix: str, line: str, category: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.category == category, (line, f)


def test_gloo_read_timeout_through_terminate() -> None:
    log = (
        "terminate called after throwing an instance of 'gloo::IoException'\n"
        f"  what():  [{GLOO}tcp/pair.cc:445] Read timeout [10.128.0.5]:29500"
    )
    f = _root(log)
    assert f is not None and f.category == "collective_timeout" and f.facts.get("direction") == "read", f


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: [../torch/csrc/distributed/c10d/TCPStore.cpp:1203] wait timeout after 1800000ms, "
        "keys: /default_pg/0//0",
        "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0",
    ],
)
def test_gloo_and_nccl_setup_through_the_store_is_rendezvous(prefix: str, line: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.category == "rendezvous", (line, f)


@pytest.mark.parametrize("prefix", ["", "node7: ", "2025-01-02 03:04:05 "])
@pytest.mark.parametrize(
    "line",
    [
        "command terminated with exit code 137",  # kubectl exec
        "Error: Process completed with exit code 137.",  # CI runner
        "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",  # an IDE's run console
        "trainer-1 exited with code 137",  # docker compose
        "ERROR: process terminated by signal SIGKILL",
        "worker 3 was killed by signal 9",
        "[2024-03-01 12:00:00] WARNING: worker pid 1234 died with signal SIGKILL",
        "  traceback : Signal 9 (SIGKILL) received by PID 4567",  # torch elastic, its exitcode line cut off
        "=   KILLED BY SIGNAL: 9 (Killed)",  # MPICH Hydra
        # https://github.com/determined-ai/determined/issues/3275
        "INFO: container failed with non-zero exit code:  (exit code 137)",
        # https://github.com/mozilla/bugbug/issues/3906
        "Training task exit with status code 137",
    ],
)
def test_sigkill_exit_records_are_killed_processes(prefix: str, line: str) -> None:
    f = _root(prefix + line)
    assert f is not None and f.category in ("host_oom", "process_crash"), (line, f)


def test_interactive_shell_job_table_killed() -> None:
    f = _root("Epoch 3: 45%| 450/1000\n[1]+  Killed                  python train.py --bs 64")
    assert f is not None and f.category == "host_oom" and f.facts.get("command", "").startswith("python"), f


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("zsh: killed     python train.py --config a.yaml", "python train.py --config a.yaml"),
        ("[1]    12345 killed     python train.py", "python train.py"),
        ("fish: Job 1, 'python train.py' terminated by signal SIGKILL (Forced quit)", ""),
    ],
)
def test_other_shells_killed(line: str, command: str) -> None:
    f = _root("step 100 loss 2.3\n" + line)
    assert f is not None and f.category == "host_oom", f
    if command:
        assert f.facts.get("command") == command, f.facts


def test_an_exit_137_after_a_named_cause_stays_behind_it() -> None:
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.06 GiB is free.\ncommand terminated with exit code 137"
    )
    f = _root(log)
    assert f is not None and f.category == "cuda_oom", f


@pytest.mark.parametrize(
    "line",
    [
        "Process finished with exit code 0",
        "exit code 1371",
        "worker exited with exit code 143",
        "Received signal 9 handler installed",
        "the handler for SIGKILL cannot be installed (docs)",
        "the model was killed by the user",
        "zsh: killed",
        "pid 12 at 10.0.1.37 port 137",
        "NCCL INFO comm 0x55d0c1a2b3c0 rank 0 nranks 8 cudaDev 0 busId 1000 - Destroy COMPLETE",
        "NCCL INFO ncclCommInitRank comm 0x5 rank 0 nranks 2 - Init COMPLETE",
        "the docs say: Trying to send to self without a matching recv is a usage error",
        "INFO: gloo Read timeout is 1800 s by default",
        "[I ProcessGroupGloo.cpp:712] Gloo timeout set to 1800000 ms",
        "INFO: allocated output tensor of shape [8, 1024]",
        "the input tensor must be the same size as the batch: docs",
    ],
)
def test_decoys_stay_silent(line: str) -> None:
    assert _root(line) is None, line
