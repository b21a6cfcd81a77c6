"""Rendezvous values and gloo device set-up, read at their source (doctor/diagnose/rules/rdzv_values.py):
a MASTER_PORT / init_method port that does not parse (torch/distributed/rendezvous.py 1.x-2.x
_env_rendezvous_handler's int(MASTER_PORT); _tcp_rendezvous_handler through Python's urllib.parse
"Port could not be cast to integer value as" / "Port out of range 0-65535"; the socket module's
"getsockaddrarg: port must be 0-65535."; TCPStore's pybind11 "incompatible constructor arguments"),
torchrun's / launch.py's argparse "invalid int value" for --master_port / --node_rank, python-etcd's server
errors under the etcd rendezvous (EtcdError table: "Raft Internal Error", "During Leader Election"), the
Kubeflow training-operator's init container (pkg/controller.v1/pytorch/initcontainer.go: nslookup of the
master, "waiting for master"), gloo's tcp/device.cc sockaddrToInterfaceName ("Unable to find interface for:
[127.0.1.1]"), and a log that ends at the process group's start (Lightning's _init_dist_connection
announcement, torch 1.8-2.0 _store_based_barrier's "Added key" with no "Completed store-based barrier").
Every case behind every launcher prefix; healthy lines of the same tools stay silent."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, failure_findings, prefixed

TB = 'Traceback (most recent call last):\n  File "/workspace/train.py", line 41, in <module>\n    main()\n'
_RDZV_PY = "/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py"

CONFIG = [
    TB + '  File "' + _RDZV_PY + '", line 180, in _env_rendezvous_handler\n'
    '    master_port = int(_get_env_or_raise("MASTER_PORT"))\n'
    "ValueError: invalid literal for int() with base 10: 'tcp://10.0.0.1:29500'",
    TB + '  File "' + _RDZV_PY + '", line 176, in _env_rendezvous_handler\n'
    '    master_port = int(_get_env_or_raise("MASTER_PORT"))\n'
    "ValueError: invalid literal for int() with base 10: '$MASTER_PORT'",
    TB + '  File "' + _RDZV_PY + '", line 120, in _tcp_rendezvous_handler\n'
    "    result = urlparse(url)\n"
    '  File "/usr/lib/python3.10/urllib/parse.py", line 178, in port\n'
    '    raise ValueError(f"Port could not be cast to integer value as {port!r}")\n'
    "ValueError: Port could not be cast to integer value as '29500abc'",
    TB + '  File "' + _RDZV_PY + '", line 120, in _tcp_rendezvous_handler\n'
    "ValueError: Port out of range 0-65535",
    TB + '  File "' + _RDZV_PY + '", line 155, in _create_c10d_store\n'
    "    return TCPStore(\n"
    "OverflowError: getsockaddrarg: port must be 0-65535.",
    TB + '  File "' + _RDZV_PY + '", line 155, in _create_c10d_store\n'
    "    return TCPStore(\n"
    "TypeError: __init__(): incompatible constructor arguments. The following argument types are supported:\n"
    "    1. torch._C._distributed_c10d.TCPStore(host_name: str, port: int, world_size: Optional[int] = None)",
    "usage: torchrun [-h] [--nnodes NNODES]\n"
    "torchrun: error: argument --master_port/--master-port: invalid int value: '$MASTER_PORT'",
    "usage: launch.py [-h] [--nnodes NNODES]\n"
    "launch.py: error: argument --node_rank/--node-rank: invalid int value: ''",
]

UNREACHABLE = [
    TB + '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/'
    'etcd_rendezvous.py", line 160, in next_rendezvous\n'
    "etcd.EtcdException: Raft Internal Error : etcdserver: request timed out",
    TB + "etcd.EtcdLeaderElectionInProgress: During Leader Election : etcdserver: leader changed",
    "nslookup: can't resolve '(null)': Name does not resolve\n"
    "nslookup: can't resolve 'job-7-master-0': Name does not resolve\n"
    "waiting for master\n",
    "nslookup: can't resolve '(null)': Name does not resolve\n"
    "nslookup: can't resolve 'job-7-master-0': Name does not resolve\n"
    "waiting for master\n" * 2,
    "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n"
    "** server can't find pytorch-dist-mnist-master-0.default.svc.cluster.local: NXDOMAIN\n\n"
    "waiting for master\n",
]

# torch 0.4-1.0's THD (torch/distributed/deprecated, torch/lib/THD/process_group/General.cpp
# HANDLE_EXCEPTIONS) raises its init's socket errors with its source after them: the ranks' meeting,
# not a peer's data channel.
THD_INIT = [
    TB + '  File "/home/u/anaconda3/lib/python3.6/site-packages/torch/distributed/deprecated/'
    '__init__.py", '
    "line 101, in init_process_group\n    group_name, rank)\n"
    "RuntimeError: Connection reset by peer at /opt/conda/conda-bld/pytorch-nightly_1542100572345/work/"
    "torch/lib/"
    "THD/process_group/General.cpp:20",
]

GLOO_IFACE = [
    TB + '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1000, in '
    "_new_process_group_helper\n"
    "    pg = ProcessGroupGloo(prefix_store, group_rank, group_size, timeout=timeout)\n"
    "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:208] ifa != nullptr. "
    "Unable to find interface for: [127.0.1.1]",
    "RuntimeError: [enforce fail at /opt/conda/conda-bld/pytorch_1/work/third_party/gloo/gloo/transport/tcp/"
    "device.cc:215] ifa != nullptr. Unable to find interface for: [10.1.2.3]",
]

HANGS = [
    "[rank: 0] Seed set to 42\nInitializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5\n",
    "GPU available: True (cuda), used: True\ninitializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4\n"
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4\n",
    "INFO:torch.distributed.distributed_c10d:Added key: store_based_barrier_key:1 to store for rank: 0\n",
]

# torch/nn/parallel/distributed.py (1.8-2.x) calls reducer._rebuild_buckets() in forward / _pre_forward;
# reducer.cpp rebuild_buckets() begins with ensure_prior_reduction_finished(): a stack cut at that line
# is that error.
REBUILD_CUT = [
    "[rank0]: \u2502 /envs/lib/python3.10/site-packages/torch/nn/parallel/distributed.py:1528 in _pre_forward"
    "   \u2502\n"
    "[rank0]: \u2502   1527 \u2502   \u2502   # This should be called only once during whole training period."
    "   \u2502\n"
    "[rank0]: \u2502 \u2771 1528 \u2502   \u2502   if torch.is_grad_enabled() and "
    "self.reducer._rebuild_buckets():"
    "   \u2502\n",
    TB
    + '  File "/usr/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 1139, in forward\n'
    "    if torch.is_grad_enabled() and self.reducer._rebuild_buckets():\n",
]
REBUILD_NOT_CUT = [
    TB
    + '  File "/usr/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 1139, in forward\n'
    "    if torch.is_grad_enabled() and self.reducer._rebuild_buckets():\nKeyboardInterrupt\n",
]

HEALTHY = [
    # every rank announced (the meeting had everyone), or rank 0's announcement not in the paste
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\ninitializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n",
    "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8\n"
    "Initializing distributed: GLOBAL_RANK: 5, MEMBER: 6/8\n",
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n",
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n" + "-" * 100 + "\ndistributed_backend=nccl\n"
    "All distributed processes registered. Starting with 2 processes\n" + "-" * 100 + "\n",
    "INFO:torch.distributed.distributed_c10d:Added key: store_based_barrier_key:1 to store for rank: 0\n"
    "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for "
    "key:store_based_barrier_key:1 with 2 nodes.\n",
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
    "  | Name  | Type   | Params\n0 | model | ResNet | 11.2 M\n"
    "Epoch 0:  12%|#2        | 12/100 [00:03<00:22,  3.91it/s, loss=2.31]\n",
    # a web app's port clash and an unrelated int() failure are not the rendezvous's
    TB + '  File "/workspace/data.py", line 12, in parse\n    n = int(row[3])\n'
    "ValueError: invalid literal for int() with base 10: 'abc'",
    "nslookup: can't resolve 'db.internal'\n",
    # a script's own int() under elastic's @record wrapper is the script's
    TB
    + '  File "/usr/lib/python3/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", '
    "line 346, in wrapper\n    return f(*args, **kwargs)\n"
    '  File "/workspace/train.py", line 5, in main\n    n = int(row)\n'
    "ValueError: invalid literal for int() with base 10: 'abc'",
    # the init container's loop whose name resolved: its normal wait before the run
    "nslookup: can't resolve 'job-7-master-0': Name does not resolve\nwaiting for master\n"
    "Server:    10.96.0.10\nAddress 1: 10.96.0.10 kube-dns.kube-system.svc.cluster.local\n\n"
    "Name:      job-7-master-0\nAddress 1: 10.244.1.5 10-244-1-5.job-7-master-0.default.svc.cluster.local\n",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log", CONFIG)
def test_rendezvous_values_that_do_not_parse(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log), "RUN224")


@pytest.mark.parametrize("log", UNREACHABLE)
def test_rendezvous_server_unreachable(log: str) -> None:
    check_root(log, "RUN222")


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log", THD_INIT)
def test_thd_init_socket_error_is_the_rendezvous(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log), "RUN222")


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log", GLOO_IFACE)
def test_gloo_device_without_interface(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log), "RUN174")


def test_gloo_loopback_fact() -> None:
    root = failure_findings(GLOO_IFACE[0])[0]
    assert root.facts.get("address") == "[127.0.1.1]" and "GLOO_SOCKET_IFNAME" in root.message


@pytest.mark.parametrize("log", HANGS)
def test_log_that_ends_at_the_process_group_start(log: str) -> None:
    check_root(log, "RUN221")


def test_hang_facts() -> None:
    check_root(HANGS[0], "RUN221", {"world_size": 5, "rank": 0})
    four_of_eight = "".join(f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/8\n" for r in (1, 2, 0, 3))
    check_root(four_of_eight, "RUN221", {"missing_ranks": [4, 5, 6, 7], "announced_ranks": [0, 1, 2, 3]})


@pytest.mark.parametrize("log", REBUILD_CUT)
def test_stack_cut_in_ddp_bucket_rebuild(log: str) -> None:
    check_root(log, "RUN202")


@pytest.mark.parametrize("log", REBUILD_NOT_CUT)
def test_stack_with_its_exception_line_is_not_a_cut(log: str) -> None:
    assert not any(f.code == "RUN202" for f in failure_findings(log)), log


@pytest.mark.parametrize("log", HEALTHY)
def test_healthy_start_stays_silent(log: str) -> None:
    assert not any(f.code in ("RUN221", "RUN222", "RUN224", "RUN174") for f in failure_findings(log)), log
