"""Desync and hang reports quoted without the head other rows read them by, and parameter-server misuse.

Each case is written from the text at its source (named beside it): TensorFlow
core/common_runtime/collective_param_resolver_local.cc (CompleteGroupLocal, 1.x-2.3 wording), NCCL
transport/net_socket.cc ("message truncated : receiving %d bytes instead of %d"), torch
distributed/flight_recorder/components/types.py (MatchInfo, 2.5-2.9), ProcessGroupNCCL.cpp
WorkNCCL::printTraceback (2.5+), horovod/common/stall_inspector.cc (0.20+), fairscale
nn/data_parallel/sharded_ddp.py (0.1-0.3), ps-lite src/postoffice.cc, MXNet kvstore_dist_server.h and
BytePS byteps/server/server.cc, DeepSpeed deepspeed/runtime/zero/stage3.py (0.5) and
partitioned_param_coordinator.py (0.9, 0.16) fetch_sub_module under faulthandler's and py-spy's dump headers,
torch_xla/core/xla_model.py xla_replication_devices (1.5-2.x).
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pgdoctor.diagnose.api import diagnose_sources


def _root(text: str) -> tuple[Optional[str], dict[str, Any]]:
    real = [f for f in diagnose_sources([("job.log", text)]) if f.severity.value != "info"]
    return (real[0].code, dict(real[0].facts)) if real else (None, {})


@pytest.mark.parametrize(
    ("text", "code", "facts"),
    [
        # CompleteGroupLocal, TF 2.0-2.3: group size differs between workers (op name present)
        (
            "tensorflow.python.framework.errors_impl.InternalError: Collective Op CollectiveReduce: "
            "Reduce(Add,Id) has group_size 6 and group_key 1 but that group has size 4",
            "RUN201",
            {"group_size": 6, "other_group_size": 4, "group_key": 1},
        ),
        # TF 1.x: "and group_key" glued to the key, the op name empty, logged by StartAbort
        (
            "2019-11-04 16:59:38.489335: W tensorflow/core/common_runtime/base_collective_executor.cc:216] "
            "BaseCollectiveExecutor::StartAbort Internal: Collective Op  has group_size 8 and group_key2 "
            "but that group has size 4",
            "RUN201",
            {"group_size": 8, "other_group_size": 4, "group_key": 2},
        ),
        # CompleteGroupLocal: device type differs
        (
            "InternalError: Collective Op CollectiveReduce is assigned to device "
            "/job:worker/replica:0/task:1/device:GPU:0 with type GPU and group_key 3 "
            "but that group has type CPU",
            "RUN201",
            {"device_type": "GPU", "other_type": "CPU", "group_key": 3},
        ),
        # CompleteGroupLocal: the group was already full
        (
            "InternalError: Collective Op CollectiveGather is assigned to device "
            "/job:worker/replica:0/task:2/device:CPU:0 and group_key 1 "
            "but that group doesn't contain that device.",
            "RUN201",
            {"device": "/job:worker/replica:0/task:2/device:CPU:0"},
        ),
        # net_socket.cc's wording quoted without "message truncated :"
        ('NCCL error "receiving 524288 bytes instead of 65536"', "RUN201", {"bytes": 524288}),
        # net_socket.cc 2.23+: "peer <addr> message truncated : receiving ..."
        (
            "host:1:2 [0] transport/net_socket.cc:520 NCCL WARN NET/Socket : peer 10.0.0.2<43211> message "
            "truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is "
            "in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. "
            "NCCL_PROTO, NCCL_ALGO) between ranks",
            "RUN201",
            {"bytes": 1048576, "expected_bytes": 65536},
        ),
        # flight recorder analyzer: a state mismatch alone is a collective that did not complete
        (
            "Collective sequence number: 1487 has errors\n"
            "internal record id: 1486\n"
            "group info: 0:default_pg\n"
            "collective: nccl:all_reduce\n"
            "input sizes: [[40]]\n"
            "output sizes: [[40]]\n"
            "world size: 2\n"
            "expected ranks: {0, 1}\n"
            "collective state: scheduled\n"
            "error msg: Culprit rank 1; Error type: COLLECTIVE_STATE_MISMATCH, Expected state: 'scheduled' "
            "does not match found state: 'completed'\n",
            "RUN283",
            {"seq": 1487, "op": "all_reduce", "ranks": [1]},
        ),
        # printTraceback with the frames (2.5+)
        (
            "[rank3]:[E508 07:35:59.440171617 ProcessGroupNCCL.cpp:733] "
            "Stack trace of the failed collective: \n"
            "#0 broadcast from /usr/local/lib/python3.12/dist-packages/torch/distributed/"
            "distributed_c10d.py:2968\n"
            "#1 wrapper from /usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py:83\n",
            "RUN151",
            {"op": "broadcast"},
        ),
        # stall_inspector.cc: one table row without the report's head
        (
            "3: [global_tensor_horovod_sum_have_data/HorovodAllreduce_globals_horovod_have_more_data_"
            "placeholder_0, global_tensor_horovod_sum_have_error/HorovodAllreduce_globals_horovod_have_error_"
            "placeholder_0]",
            "RUN201",
            {"missing_ranks": [3]},
        ),
        # the row of a rank past the shutdown time
        (
            "0!: [DistributedAdam_Allreduce/HorovodAllreduce_gradients_dense_1_MatMul_grad_0]",
            "RUN201",
            {"missing_ranks": [0]},
        ),
        # PyTorch Horovod's op names (mpi_ops_v2.cc GetOpName)
        ("1: [allreduce.noname.12, allreduce.fc.weight]", "RUN201", {"missing_ranks": [1]}),
        # sharded_ddp.py
        (
            "AssertionError: A bucket failed to be sent, probably unused parameters.Either remove the unused "
            "parameter or de-activate ShardedDDP buckets -set reduce_buffer_size to 0-",
            "RUN202",
            {"framework": "fairscale"},
        ),
        # ps-lite postoffice.cc (MXNet 0.9-1.x)
        (
            "mxnet.base.MXNetError: [09:49:58] src/postoffice.cc:80: Check failed: (customers_.count(id)) == "
            "((size_t)0) id 0 already exists",
            "RUN357",
            {"problem": "duplicate_customer", "id": 0},
        ),
        # ps-lite 2018+ / BytePS
        (
            "  what():  [12:00:01] src/postoffice.cc:101: Check failed: "
            "(customers_[app_id].count(customer_id)) == ((size_t) 0) customer_id 1 already exists",
            "RUN357",
            {"problem": "duplicate_customer", "id": 1},
        ),
        # BytePS server.cc
        (
            "[05:05:29] 3rdparty/ps-lite/include/dmlc/logging.h:276: [05:05:29] byteps/server/server.cc:52: "
            "Check failed: updates.merged.tensor init 10551296 first",
            "RUN357",
            {"problem": "key_not_initialised", "key": 10551296},
        ),
        # MXNet kvstore_dist_server.h
        (
            "mxnet.base.MXNetError: [12:00:01] src/kvstore/./kvstore_dist_server.h:312: Check failed: "
            "!stored.is_none() init 3 first",
            "RUN357",
            {"problem": "key_not_initialised", "key": 3},
        ),
        # faulthandler dump of a ZeRO-3 rank (DeepSpeed 0.5 stage3.py)
        (
            "Thread 0x00007f57caf71740 (most recent call first):\n"
            '  File "/env/lib/python3.8/site-packages/torch/cuda/streams.py", line 95 in synchronize\n'
            '  File "/ds/deepspeed/runtime/zero/stage3.py", line 490 in _synchronize_communication\n'
            '  File "/ds/deepspeed/runtime/zero/stage3.py", line 406 in fetch_sub_module\n'
            '  File "/ds/deepspeed/runtime/zero/stage3.py", line 1139 in pre_sub_module_forward_function\n',
            "RUN358",
            {"frame": "fetch_sub_module", "zero_stage": 3},
        ),
        # py-spy dump (hex thread address) of a ZeRO-3 rank (0.9+ partitioned_param_coordinator.py)
        (
            'Thread 0x7FA6E7C01740 (idle): "MainThread"\n'
            "    wait (threading.py:302)\n"
            "    fetch_sub_module (deepspeed/runtime/zero/partitioned_param_coordinator.py:306)\n"
            "    _pre_forward_module_hook (deepspeed/runtime/zero/parameter_offload.py:345)\n",
            "RUN358",
            {"framework": "deepspeed"},
        ),
        # xla_model.py, as xmp.spawn's child reports it
        (
            "Exception in device=TPU:0: Cannot replicate if number of devices (1) is different from 8",
            "RUN359",
            {"local_devices": 1, "replication_devices": 8},
        ),
        (
            "RuntimeError: Cannot replicate across different device types: devices=['xla:0', 'xla:1']/"
            "['TPU:0', 'CPU:0']",
            "RUN359",
            {"framework": "torch_xla"},
        ),
    ],
)
def test_quoted_desync_and_kvstore_texts(text: str, code: str, facts: dict[str, Any]) -> None:
    got, got_facts = _root(text)
    assert got == code, (got, got_facts)
    for k, v in facts.items():
        assert got_facts.get(k) == v, (k, got_facts)


@pytest.mark.parametrize(
    "text",
    [
        # Horovod's ops named in a bracketed node list of an error, not a stall table row
        "[[{{node DistributedAdam_Allreduce/HorovodAllreduce_gradients_0}}]]",
        # a flight recorder report whose ranks all match
        "Collective sequence number: 5 has errors\nerror msg: \n",
        # printTraceback without a flight recorder: chatter after the watchdog's record
        "[rank1]:[E1118 20:32:23.957466207 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective "
        "not found, potentially because FlightRecorder is disabled.",
        # an exception raised through the fetch is a traceback, not a hang dump (its exception line is read)
        "Traceback (most recent call last):\n"
        '  File "/e/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 306, in fetch_sub_module\n'
        "    self.__all_gather_params(params_to_fetch, forward)\n",
        # a bracketed name without the table's rank before it, or followed by more words
        "[allreduce.noname.3]",
        "[broadcast.noname.1] done in 3s",
        # a plain read that came up short in some other program
        "Received 10 bytes instead of 20",
    ],
)
def test_lookalikes_stay_silent(text: str) -> None:
    assert _root(text)[0] is None
