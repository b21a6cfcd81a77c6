"""Families added for the v17 held-out misses (session of 2026-12-06, helper t2), each with the real line
of its thread and a near-miss that must stay silent (or keep its old reading):

- composer's launcher: _monitor_processes' "Rank 0 crashed with exit code -11." (mosaicml/diffusion#140);
- torchrun's agent line retyped with the blanks moved, "failed ( exitcode:-9)" (youngwanLEE/MPViT#17);
- TCPStore's client record whose frames show the store being built (TCPStore::ping under
  TCPStore::TCPStore), after vLLM's init line (vllm-project/vllm#18362);
- DeepSpeed's init_distributed line followed only by other ranks' init records (RLHFlow/Online-RLHF#11), and
  timm's "Training in distributed mode ..." as a line past the meeting (changlin31/DS-Net#13, a decoy);
- Megatron's "Communication call has not been issued for this bucket" (NVIDIA/Megatron-LM#1150);
- python-etcd's EtcdKeyNotFound on torch's /torch/elastic keys (pytorch/pytorch#132950);
- submitit scripts' "No shared folder available" (facebookresearch/mae#55);
- Caffe2's redis store handler enforce under CreateCommonWorld (facebookarchive/caffe2#969);
- MXNet 0.7's pooled storage "Memory allocation failed." (apache/mxnet#2913);
- Paddle's SIGTERM summary over a C++ stack waiting in NCCL (ROCm/rccl#429);
- autograd anomaly mode's "Error detected in ..." before gloo's monitoredBarrier echo (alphacep/vosk-tts#18);
- "Timeout: A call to 'allGather' has taken over 300.000000 seconds." (Lightning-AI/torchmetrics#938);
- Taskcluster's "GCP Metadata Service says termination is imminent" (mozilla/translations#964);
- horovod's network.py raise cut before its exception line (horovod/horovod#1969);
- c10d 1.11's client errno-97 warnings repeated with the log stopping there (pytorch/pytorch#74316);
- a title naming InfiniBand with "connection reset by peer" (pytorch/pytorch#43258).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root


# https://github.com/mosaicml/diffusion/issues/140
@pytest.mark.parametrize(
    "line,code,facts",
    [
        ("ERROR:composer.cli.launcher:Rank 0 crashed with exit code -11.", "RUN131", {"signal": "SIGSEGV"}),
        (
            "ERROR:composer.cli.launcher:Rank 3 crashed with exit code 1.",
            "RUN133",
            {"rank": 3, "exitcode": 1},
        ),
        (
            "ERROR:composer.cli.launcher:Global rank 0 (PID 208865) exited with code -11",
            "RUN131",
            {"pid": 208865},
        ),
    ],
)
def test_composer_launcher_crash_line(line: str, code: str, facts: dict[str, object]) -> None:
    _check(line, code, facts)


def test_composer_clean_exit_is_silent() -> None:
    assert _root("INFO:composer.cli.launcher:Rank 0 finished successfully.") is None


# https://github.com/youngwanLEE/MPViT/issues/17
@pytest.mark.parametrize(
    "line",
    [
        "torch.distributed.elastic.multiprocessing.api:failed ( exitcode:-9)",
        "torch.distributed.elastic.multiprocessing.api:failed (exitcode:-9 )",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 "
        "(pid: 12) of "
        "binary: /usr/bin/python",
    ],
)
def test_torchrun_agent_line_retyped(line: str) -> None:
    _check(line, "RUN121", {"exitcode": -9})


# https://github.com/vllm-project/vllm/issues/18362
VLLM_PING = (
    "DEBUG 05-19 18:43:28 [parallel_state.py:892] world_size=1 rank=0 local_rank=-1 "
    "distributed_init_method=tcp://10.0.0.5:58159 backend=gloo\n"
    "[W519 18:43:28.514281000 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=22, "
    "addr=[10.0.0.5]:58160, remote=[10.0.0.5]:58159): Connection reset by peer\n"
    "Exception raised from recvBytes at "
    "/Users/runner/work/pytorch/pytorch/pytorch/torch/csrc/distributed/c10d/"
    "Utils.hpp:676 (most recent call first):\n"
    "frame #2: unsigned int c10d::detail::TCPClient::receiveValue<unsigned int>() + 40 (0x116b4ff58 in "
    "libtorch_cpu.dylib)\n"
    "frame #3: c10d::TCPStore::ping() + 200 (0x116b4e68c in libtorch_cpu.dylib)\n"
)


def test_store_client_dropped_while_the_store_is_built() -> None:
    _check(VLLM_PING, "RUN222", {"master_port": 58159, "connections": 1})


def test_store_client_dropped_late_in_a_run_stays_silent() -> None:
    # the same record after the run's own lines, its frames a later request's: the store's host leaving last
    log = (
        "step 1200 loss 2.31\n"
        "[W519 18:43:28.514281000 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=22, "
        "addr=[10.0.0.5]:58160, remote=[10.0.0.5]:58159): Connection reset by peer\n"
        "frame #3: c10d::TCPStore::check(std::vector<std::string> const&) + 200 (0x116b4e68c in "
        "libtorch_cpu.so)\n"
    )
    assert _root(log) is None


# https://github.com/RLHFlow/Online-RLHF/issues/11
DS_INIT = (
    "[2024-06-11 00:23:36,254] [INFO] [comm.py:637:init_distributed] cdb=None\n"
    "[2024-06-11 00:23:36,254] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in "
    "DeepSpeed with "
    "backend nccl\n"
    "[2024-06-11 00:23:36,296] [INFO] [comm.py:637:init_distributed] cdb=None\n"
)


def test_deepspeed_log_ends_at_init_distributed() -> None:
    _check(DS_INIT, "RUN221", {"problem": "hang at process group start", "backend": "nccl"})


@pytest.mark.parametrize(
    "after",
    [
        "[2024-06-11 00:24:01,000] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.14.0\n",
        "{'loss': 1.234, 'learning_rate': 5e-07, 'epoch': 0.01}\n",
    ],
)
def test_deepspeed_init_that_went_on_is_silent(after: str) -> None:
    assert _root(DS_INIT + after) is None


def test_deepspeed_init_line_alone_is_silent() -> None:
    assert _root(DS_INIT.splitlines()[1]) is None


# https://github.com/changlin31/DS-Net/issues/13 (a decoy: the group came up)
def test_timm_announcement_after_the_store_barrier_is_past_the_meeting() -> None:
    log = (
        "01/21 05:42:18 AM Added key: store_based_barrier_key:1 to store for rank: 1\n"
        "01/21 05:42:18 AM Added key: store_based_barrier_key:1 to store for rank: 0\n"
        "01/21 05:42:18 AM Training in distributed mode with multiple processes, 1 GPU per process. "
        "Process 0, "
        "total 2.\n"
        "01/21 05:42:18 AM Training in distributed mode with multiple processes, 1 GPU per process. "
        "Process 1, "
        "total 2.\n"
    )
    assert _root(log) is None
    # without the announcement the log still ends at the barrier: the hang reading stands
    assert _root("\n".join(log.splitlines()[:2])) is not None


# https://github.com/NVIDIA/Megatron-LM/issues/1150
@pytest.mark.parametrize(
    "line,facts",
    [
        (
            "[QUESTION] Adding new parameters in ColumnParallelLinear/RowParallelLinear raises "
            "AssertionError "
            "(Communication call has not been issued for this bucket) when using overlap-grad-reduce",
            {"framework": "megatron"},
        ),
        (
            "AssertionError: Communication call has not been issued for this bucket (97/98 params have grad "
            "available)",
            {"params_with_grad": 97, "params_in_bucket": 98},
        ),
    ],
)
def test_megatron_bucket_never_reduced(line: str, facts: dict[str, object]) -> None:
    _check(line, "RUN202", facts)


def test_megatron_overlap_setting_is_silent() -> None:
    assert _root("  overlap_grad_reduce ............................ True") is None


# https://github.com/pytorch/pytorch/issues/132950
def test_etcd_key_of_torch_rendezvous_not_found() -> None:
    title = (
        'Dynamic rendezvous with etcd-v2 fails with "etcd.EtcdKeyNotFound: Key not found : '
        '/torch/elastic/store"'
    )
    _check(title, "RUN222", {"backend": "etcd", "problem": "etcd_key_missing"})


def test_etcd_key_of_another_program_is_not_the_rendezvous() -> None:
    root = _root("etcd.EtcdKeyNotFound: Key not found : /myapp/config")
    assert root is None or root.code != "RUN222"


# https://github.com/facebookresearch/mae/issues/55
@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_submitit_no_shared_folder(prefix: str) -> None:
    line = (
        "When I run submitit_pretrain.py ,get an erroe :RuntimeError: No shared folder available in "
        "line120:'(args.dist_url = get_init_file().as_uri() )."
    )
    _check(prefixed(prefix, "RuntimeError: No shared folder available"), "RUN224", {"init_method": "file://"})
    _check(line, "RUN224", {"problem": "no_shared_folder"})


# https://github.com/facebookarchive/caffe2/issues/969
def test_caffe2_redis_store_error_reply() -> None:
    log = (
        "RuntimeError: [enforce fail at redis_store_handler.cc:44] reply->type == "
        "REDIS_REPLY_INTEGER. 6 vs 3 "
        "Error from operator:\n"
        'input: "store_handler" output: "allreduce_0_cw" name: "allreduce_0_cw_op" type: "CreateCommonWorld" '
        'arg { name: "rank" i: 0 } arg { name: "size" i: 2 } engine: "GLOO"\n'
    )
    _check(log, "RUN222", {"store": "caffe2 redis store handler"})


def test_caffe2_store_key_already_set() -> None:
    line = (
        "RuntimeError: [enforce fail at redis_store_handler.cc:48] reply->integer == 1. 0 vs 1 Value at "
        "allreduce_0_cw_op/0 was already set (perhaps you reused a run ID you have used before?)"
    )
    _check(line, "RUN224", {"problem": "key_already_set"})


# https://github.com/apache/mxnet/issues/2913
def test_mxnet_pooled_storage_allocation_failed() -> None:
    log = (
        "[19:03:47] /home/deeper/mxnet/dmlc-core/include/dmlc/./logging.h:235: [19:03:47] "
        "src/storage/./pooled_storage_manager.h:62: Memory allocation failed.\n"
        "Traceback (most recent call last):\n"
        '  File "train_mynet.py", line 90, in <module>\n'
    )
    _check(log, "RUN101", {"framework": "mxnet"})


def test_memory_allocation_failed_of_another_program_is_not_the_gpu() -> None:
    root = _root("[19:03:47] src/net/server.cc:88: Memory allocation failed.")
    assert root is None or root.code != "RUN101"


# https://github.com/ROCm/rccl/issues/429
PADDLE_STACK = (
    "--------------------------------------\n"
    "C++ Traceback (most recent call last):\n"
    "--------------------------------------\n"
    "0   paddle::imperative::BasicEngine::Execute()\n"
    "5   paddle::imperative::Reducer::FusedAllReduceSchedule(int, paddle::imperative::Group&, int)\n"
    "8   ncclAllReduce\n"
    "9   ncclEnqueueCheck(ncclInfo*)\n"
    "10  ncclBarrierEnqueueWait(ncclComm*)\n"
    "11  __device_stub__ncclSendRecvKernel_copy_i8(ncclDevComm*)\n"
    "\n"
    "----------------------\n"
    "Error Message Summary:\n"
    "----------------------\n"
    "FatalError: `Termination signal` is detected by the operating system.\n"
)


def test_paddle_terminated_while_waiting_in_nccl() -> None:
    _check(PADDLE_STACK, "RUN297", {"frame": "ncclBarrierEnqueueWait", "signal": "SIGTERM"})


def test_paddle_terminated_elsewhere_is_not_a_stuck_collective() -> None:
    log = (
        "C++ Traceback (most recent call last):\n"
        "0   paddle::framework::Executor::Run(paddle::framework::ProgramDesc const&)\n"
        "1   paddle::operators::ReaderOp::RunImpl()\n"
        "\n"
        "FatalError: `Termination signal` is detected by the operating system.\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN297"


# https://github.com/alphacep/vosk-tts/issues/18 (a decoy: rank 0's own training error)
def test_autograd_anomaly_leads_the_monitored_barrier_echo() -> None:
    log = (
        "[E ProcessGroupGloo.cpp:137] Rank 1 successfully reached monitoredBarrier, but received "
        "errors while "
        "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
        "/torch/autograd/__init__.py:197: UserWarning: Error detected in torch::autograd::AccumulateGrad. "
        "Traceback of forward call that caused the error:\n"
        '  File "/vosk-tts/training/train_finetune.py", line 228, in run\n'
        "    net_dur_disc = DDP(net_dur_disc, device_ids=[rank], find_unused_parameters=True)\n"
    )
    root = _root(log)
    assert root is not None and root.category == "process_crash", root
    _check(
        "UserWarning: Error detected in MulBackward0. No forward pass information available. Enable detect "
        "anomaly during forward pass for more information.",
        "RUN132",
        {"node": "MulBackward0"},
    )


def test_anomaly_mode_switched_on_is_silent() -> None:
    assert (
        _root("UserWarning: Anomaly Detection has been enabled. This mode will increase the runtime") is None
    )


# https://github.com/Lightning-AI/torchmetrics/issues/938
def test_collective_call_taken_over_its_limit() -> None:
    line = (
        "Timeout: A call to 'allGather' has taken over 300.000000 seconds. Terminating the distributed job."
    )
    _check(line, "RUN151", {"op": "allGather", "timeout_s": 300.0})


def test_other_call_taken_over_is_not_a_collective() -> None:
    root = _root("Timeout: A call to 'load_checkpoint' has taken over 300.000000 seconds.")
    assert root is None or root.code != "RUN151"


# https://github.com/mozilla/translations/issues/964
@pytest.mark.parametrize("cloud", ["GCP", "EC2"])
def test_worker_told_of_imminent_termination(cloud: str) -> None:
    log = (
        f"Dec 17 16:03:58Z translations-1-b-linux-v100-gpu-4 start-worker 2024/12/17 16:03:58 "
        f"{cloud} Metadata "
        "Service says termination is imminent\n"
        "Dec 17 16:04:09Z translations-1-b-linux-v100-gpu-4 systemd-logind Power key pressed.\n"
    )
    root = _root(log)
    assert root is not None and root.category == "process_crash" and root.facts.get("preempted"), root


# https://github.com/horovod/horovod/issues/1969
def test_horovod_driver_unreachable_cut_at_the_raise() -> None:
    log = (
        "Launching horovod task function was not successful:\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.6/site-packages/horovod/run/driver/driver_service.py", line 44, in '
        "__init__\n"
        "    match_intf=match_intf)\n"
        '  File "/opt/conda/lib/python3.6/site-packages/horovod/run/common/util/network.py", line 172, in '
        "__init__\n"
        "    'Linux.'.format(service_name=service_name, addresses=addresses))\n"
    )
    _check(log, "RUN222", {"problem": "horovod_service_unreachable", "cut": True})


# https://github.com/pytorch/pytorch/issues/74316
_NO_V6_SERVER = (
    "[W socket.cpp:401] [c10d] The server socket cannot be initialized on [::]:29501 (errno: 97 - Address "
    "family not supported by protocol).\n"
)
_NO_V6_CLIENT = (
    "[W socket.cpp:558] [c10d] The client socket cannot be initialized to connect to [localhost]:29501 "
    "(errno: 97 - Address family not supported by protocol).\n"
)


def test_client_connect_rounds_without_ipv6_and_the_log_stops() -> None:
    _check("python another.py 0\n" + _NO_V6_SERVER + _NO_V6_CLIENT * 3, "RUN222", {"connect_rounds": 3})


@pytest.mark.parametrize(
    "log",
    [
        _NO_V6_SERVER + _NO_V6_CLIENT,
        _NO_V6_SERVER + _NO_V6_CLIENT * 2 + "Epoch 1/10: loss 0.93\nEpoch 2/10: loss 0.88\n",
    ],
)
def test_client_without_ipv6_at_a_healthy_start_is_silent(log: str) -> None:
    assert _root(log) is None


# https://github.com/pytorch/pytorch/issues/43258
def test_title_naming_infiniband_and_a_reset() -> None:
    root = _root("【ERROR】connection reset by peer, when using infiniband")
    assert root is not None and root.category == "nccl_network", root


def test_infiniband_word_alone_is_silent() -> None:
    assert _root("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0> infiniband") is None
