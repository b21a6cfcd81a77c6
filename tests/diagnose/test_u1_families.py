"""Families added for the v18 dev misses (session of 2026-12-06 evening, helper u1: rendezvous and
driver_env), each with the real line of its thread, its variants, and a near-miss that must stay silent:

- a paste whose last line stops mid-word still reads socket.cpp's "server socket has failed to listen on any
  local network address" (Time-MoE/Time-MoE#90) and ProcessGroupNCCL's "store->get('0') got error: ..."
  (modelscope/ms-swift#3612);
- a KeyboardInterrupt whose traceback ends in the ranks' meeting (bps.init, init_process_group, the
  rendezvous handlers, init_rpc, DeepSpeed's init_distributed, hvd.init) is a rendezvous hang
  (bytedance/byteps#419);
- NCCL's NVLS bind message quoted bare, its CUDA error on the next line (pytorch/ci-infra#541);
- Transformer Engine's "CUDA Error: operation not supported" (NVIDIA/TransformerEngine#991);
- PaddlePaddle v2's "trainer_count * num_devices_in_model ... exceeds number of GPU devices"
  (PaddlePaddle/Paddle#12351);
- a fatal signal inside UCX after it could not open a transport (ai-dynamo/dynamo#350);
- pytorch/examples' DDP "Initializing process group with: {...}" lines and nothing after
  (pytorch/pytorch#52848);
- torchrun for several nodes with a loopback --master-addr, then only its banner
  (deepseek-ai/DeepSeek-V3#487);
- torch.distributed.rpc's _all_gather timeout at start-up (alibaba/graphlearn-for-pytorch#66);
- Open MPI's "direct launched using srun, but OMPI was not built with SLURM's PMI support"
  (NVIDIA/NeMo#10997, RUN552).
"""

from __future__ import annotations

import pytest

from pgdoctor.model.lazy_re import cut_tail
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root


@pytest.mark.parametrize(
    "text,hit",
    [
        ("network address", True),
        ("network addres", True),
        ("netw", True),
        ("n", True),
        ("network address. useIpv6: 0", True),
        ("network adress", False),
        # a word's end at the line's end is a wrapped line as often as a cut one: the next line goes on
        ("network", False),
        ("netx", False),
        ("", False),
    ],
)
def test_cut_tail(text: str, hit: bool) -> None:
    import re

    assert bool(re.search("any local " + cut_tail("network address"), "any local " + text)) is hit


# https://github.com/Time-MoE/Time-MoE/issues/90
@pytest.mark.parametrize(
    "line",
    [
        "Error:  Setup nccl fail, so set device to cpu: The server socket has failed to listen on any local "
        "network addres",
        "RuntimeError: The server socket has failed to listen on any local netw",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on "
        "any local network address. "
        "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
    ],
)
def test_store_server_listen_cut(line: str) -> None:
    root = _root(line)
    assert root is not None and root.category == "rendezvous", root


def test_store_server_listen_words_changed_stay_silent() -> None:
    assert (
        _root("The server socket has failed to listen on any local network adapter named eth9 today") is None
    )


# https://github.com/modelscope/ms-swift/issues/3612 (the title is the log)
@pytest.mark.parametrize(
    "line",
    [
        "RTX3090上运行sft-rlhf-grpo微调，报错：torch.distributed.DistBackendError: [3] is setting up NCCL "
        "communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but "
        "store->get('0') got e",
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got err",
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got error: Conn",
    ],
)
def test_unique_id_store_read_cut(line: str) -> None:
    _check(line, "RUN222")


def test_unique_id_store_read_with_a_line_after_needs_its_error() -> None:
    # not the paste's end: an unknown error text is not read as a store failure by this row
    log = (
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got error: Something else\n"
        "Epoch 1: 100%|##########| 10/10 [00:01<00:00]\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN222", root


# https://github.com/bytedance/byteps/issues/419
_BPS = (
    "Traceback (most recent call last):\n"
    '  File "/home/sdn/fj/byteps_ddp/scripts/run_ddp_tcp/../../basic_byteps.py", line 45, in '
    "<module>\n"
    "    bps.init()\n"
    '  File "/home/sdn/anaconda3/envs/fj/lib/python3.9/site-packages/byteps/common/__init__.py",'
    " line 63, in init\n"
    "    return self.C_LIB_CTYPES.byteps_lazy_init()\n"
    "KeyboardInterrupt\n"
)
_TORCH_INIT = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 20, in <module>\n'
    '    dist.init_process_group("nccl")\n'
    '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 595, '
    "in init_process_group\n"
    "    store, rank, world_size = next(rendezvous_iterator)\n"
    '  File "/usr/lib/python3/site-packages/torch/distributed/rendezvous.py", line 257, in '
    "_env_rendezvous_handler\n"
    "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)\n"
    '  File "/usr/lib/python3/site-packages/torch/distributed/rendezvous.py", line 188, in '
    "_create_c10d_store\n"
    "    return TCPStore(\n"
    "KeyboardInterrupt\n"
)
_HVD = (
    "Traceback (most recent call last):\n"
    '  File "train_hvd.py", line 9, in <module>\n'
    "    hvd.init()\n"
    '  File "/opt/conda/lib/python3.8/site-packages/horovod/common/basics.py", line 130, in '
    "init\n"
    "    result = self.MPI_LIB_CTYPES.horovod_init(\n"
    "KeyboardInterrupt\n"
)


_TCP_HANDLER = (
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py", line 133, in '
    "_tcp_rendezvous_handler\n"
    "    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n"
    "KeyboardInterrupt\n"
)


@pytest.mark.parametrize("log", [_BPS, _TORCH_INIT, _HVD, _TCP_HANDLER])
def test_interrupted_in_the_meeting_is_a_rendezvous_hang(log: str) -> None:
    _check(log, "RUN221", {"waits_in": "rendezvous"})


def test_interrupted_in_a_collective_keeps_its_reading() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    dist.all_reduce(t)\n"
        '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 1320, '
        "in all_reduce\n"
        "    work.wait()\n"
        "KeyboardInterrupt\n"
    )
    _check(log, "RUN512", {"waits_in": "collective"})


def test_interrupted_in_user_code_stays_silent() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    batch = next(it)\n"
        '  File "/home/u/data.py", line 12, in __next__\n'
        "    time.sleep(1)\n"
        "KeyboardInterrupt\n"
    )
    assert _root(log) is None


# https://github.com/pytorch/ci-infra/pull/541
def test_nvls_bind_quoted_bare_with_the_error_below() -> None:
    log = (
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:\n"
        "CUDA error 401 'the operation cannot be performed in the present state'.\n"
        "This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\n"
    )
    _check(log, "RUN292", {"feature": "nvls"})


def test_nvls_bind_on_one_line() -> None:
    _check(
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 801 'operation not "
        "supported'.",
        "RUN292",
    )


# https://github.com/NVIDIA/TransformerEngine/issues/991
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: /jizhicfs/macroliu/TransformerEngine/transformer_engine/pytorch/csrc/userbuffers/"
        "userbuffers-host.cpp:208 in function create_communicator_grouped2: CUDA Error: "
        "operation not supported",
        "RuntimeError: "
        "/workspace/TransformerEngine/transformer_engine/common/util/cuda_driver.h:42 in function "
        "call: CUDA Error: operation not supported",
    ],
)
def test_transformer_engine_operation_not_supported(line: str) -> None:
    _check(line, "RUN307")


def test_operation_not_supported_on_this_os_stays_other() -> None:
    root = _root("RuntimeError: CUDA Error: OS call failed or operation not supported on this OS")
    assert root is None or root.code != "RUN307", root


# https://github.com/PaddlePaddle/Paddle/issues/12351
def test_paddle_trainer_count_exceeds_gpus() -> None:
    log = (
        "I0722 13:28:02.449893 5872 MultiGradientMachine.cpp:99] numLogicalDevices=1 "
        "numThreads=2 numDevices=1\n"
        "F0722 13:28:02.449947 5872 MultiGradientMachine.cpp:104] trainer_count * "
        "num_devices_in_model (2*1)=2 "
        "exceeds number of GPU devices(1)\n"
        "*** Check failure stack trace: ***\n"
    )
    _check(log, "RUN264", {"requested_gpus": 2, "visible_gpus": 1})


# https://github.com/ai-dynamo/dynamo/issues/350
_UCX = (
    "INFO 04-02 02:15:59 nixl.py:38] Initializing NIXL wrapper\n"
    "[1743560160.063188] [host:23812:0]        ib_iface.c:1182 UCX  ERROR erdma_0: iface "
    "0x32ce7410 failed to create UD QP TX wr:256 sge:6 inl:64 resp:0 RX wr:4096 sge:1 resp:0 "
    "failed: Invalid argument\n"
    "[1743560160.063372] [host:23812:0]      ucp_worker.c:1413 UCX  ERROR "
    "uct_iface_open(ud_verbs/erdma_0:1) failed: Input/output error\n"
    "[host:23812:0:23812] Caught signal 11 (Segmentation fault: address not mapped to object "
    "at address 0x70)\n"
    "==== backtrace (tid:  23812) ====\n"
    " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x304) [0x7f12f404f074]\n"
    " 1  /usr/lib/libucs.so.0(+0x3c274) [0x7f12f404f274]\n"
    " 2  /usr/lib/libucs.so.0(+0x3c4b8) [0x7f12f404f4b8]\n"
    " 3  /lib/x86_64-linux-gnu/libc.so.6(+0x45330) [0x7f1700ee0330]\n"
    " 4  /usr/lib/libucp.so.0(ucp_worker_query+0x39) [0x7f12e45d9829]\n"
    " 5  /usr/local/nixl/lib/x86_64-linux-gnu/libucx_utils.so(_ZN13nixlUcxWorker6epAddrERmS0_+0x"
    "53) [0x7f149b6b6ebb]\n"
)


def test_segfault_inside_ucx_after_a_transport_it_could_not_open() -> None:
    _check(
        _UCX, "RUN336", {"library": "ucx", "frame": "ucp_worker_query", "ucx_transport": "ud_verbs/erdma_0:1"}
    )


def test_segfault_in_the_program_keeps_its_reading() -> None:
    log = (
        "[host:23812:0:23812] Caught signal 11 (Segmentation fault: address not mapped to object "
        "at address 0x70)\n"
        "==== backtrace (tid:  23812) ====\n"
        " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x304) [0x7f12f404f074]\n"
        " 1  /lib/x86_64-linux-gnu/libc.so.6(+0x45330) [0x7f1700ee0330]\n"
        " 2  /home/u/build/libmymodel.so(_Z7forwardPf+0x39) [0x7f12e45d9829]\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN336", root


# https://github.com/pytorch/pytorch/issues/52848
_EXAMPLE = (
    "$ export NCCL_DEBUG=INFO ; python3 -m torch.distributed.launch --nnode=2 --node_rank=0 "
    "--nproc_per_node=1 ddp.py\n"
    "[26236] Initializing process group with: {'MASTER_ADDR': '148.251.86.243', 'MASTER_PORT': "
    "'29500', 'RANK': '0', 'WORLD_SIZE': '2'}\n"
    "$ export NCCL_DEBUG=INFO ; python3 -m torch.distributed.launch --nnode=2 --node_rank=1 "
    "--nproc_per_node=1 ddp.py\n"
    "[17186] Initializing process group with: {'MASTER_ADDR': '148.251.86.243', 'MASTER_PORT': "
    "'29500', 'RANK': '1', 'WORLD_SIZE': '2'}\n"
)


def test_ddp_example_log_ends_at_the_process_group_start() -> None:
    _check(_EXAMPLE, "RUN221", {"world_size": 2, "master_addr": "148.251.86.243"})


@pytest.mark.parametrize(
    "log",
    [
        # one announcement alone: a healthy record
        "[26236] Initializing process group with: {'MASTER_ADDR': '10.0.0.1', "
        "'MASTER_PORT': '29500', 'RANK': "
        "'0', 'WORLD_SIZE': '2'}\n",
        # past the meeting
        _EXAMPLE
        + "[26236] world_size = 2, rank = 0, backend=nccl\n[17186] world_size = 2, rank = 1, backend=nccl\n",
        _EXAMPLE + "[26236] rank = 0, world_size = 2\n",
        # a world of one
        "[1] Initializing process group with: {'MASTER_ADDR': 'localhost', "
        "'MASTER_PORT': '29500', 'RANK': '0', "
        "'WORLD_SIZE': '1'}\n[2] Initializing process group with: {'MASTER_ADDR': "
        "'localhost', 'MASTER_PORT': "
        "'29500', 'RANK': '0', 'WORLD_SIZE': '1'}\n",
    ],
)
def test_ddp_example_that_went_on_is_silent(log: str) -> None:
    assert _root(log) is None


# https://github.com/deepseek-ai/DeepSeek-V3/issues/487
_BANNER = (
    "\n"
    "W0130 23:09:58.895000 139676709838976 torch/distributed/run.py:779]\n"
    "W0130 23:09:58.895000 139676709838976 torch/distributed/run.py:779] "
    "*****************************************\n"
    "W0130 23:09:58.895000 139676709838976 torch/distributed/run.py:779] Setting "
    "OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
    "system being overloaded, please further tune the variable for optimal performance in your "
    "application as needed.\n"
    "W0130 23:09:58.895000 139676709838976 torch/distributed/run.py:779] "
    "*****************************************\n"
)


@pytest.mark.parametrize(
    "command,node_rank",
    [
        (
            "`torchrun --nnodes 2 --nproc-per-node 8 --node-rank 1 --master-addr 127.0.0.1 "
            "generate.py --ckpt-path "
            "DeepSeek-V3-Demo --config configs/config_671B.json --interactive`",
            1,
        ),
        ("torchrun --nnodes=2 --nproc_per_node=8 --node_rank=0 --master_addr=localhost train.py", 0),
        ("python -m torch.distributed.run --nnodes 4 --rdzv-endpoint 127.0.0.1:29400 train.py", None),
    ],
)
def test_multi_node_launch_with_a_loopback_store(command: str, node_rank: object) -> None:
    _check(command + "\n" + _BANNER, "RUN221", {"problem": "loopback_store", "node_rank": node_rank})


@pytest.mark.parametrize(
    "log",
    [
        # one node: loopback is right
        "torchrun --nnodes 1 --nproc-per-node 8 --master-addr 127.0.0.1 train.py\n" + _BANNER,
        # a routable address
        "torchrun --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 train.py\n" + _BANNER,
        # the run went on (two agents on one host, a test)
        "torchrun --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 train.py\n"
        + _BANNER
        + "Epoch 1: 100%|##########| 10/10 [00:01<00:00, 9.1it/s, loss=0.31]\n",
    ],
)
def test_loopback_store_near_misses_stay_silent(log: str) -> None:
    assert _root(log) is None


# https://github.com/alibaba/graphlearn-for-pytorch/issues/66
_RPC = (
    "-- [Client 1] Initializing client ...\n"
    "-- [Client 1] Initializing training process group of PyTorch ...\n"
    "ERROR:root:Failed to respond to 'global_barrier' in time, got error Followers "
    "['dist-train-supervised-sage-client-1', 'dist-train-supervised-sage-client-3'] timed out "
    "in _all_gather after 15.00 seconds. The first exception is RPCErr:1:RPC ran for more than "
    "set timeout (15000 ms) and will now be marked with an error\n"
)


def test_rpc_all_gather_timeout_at_start_is_a_rendezvous() -> None:
    _check(_RPC, "RUN221", {"problem": "rpc_init_all_gather"})


def test_rpc_timeout_of_a_call_keeps_its_reading() -> None:
    _check(
        "RuntimeError: RPC ran for more than set timeout (60000 ms) and will now be marked with an error",
        "RUN151",
    )


def test_rpc_all_gather_timeout_at_shutdown_keeps_its_reading() -> None:
    log = (
        "-- Initializing client ...\n"
        '  File "/usr/lib/python3/site-packages/torch/distributed/rpc/api.py", line 320, in '
        "shutdown\n"
        "    _wait_all_workers(timeout)\n"
        "RuntimeError: Followers ['w1'] timed out in _all_gather after 5.00 seconds. The first "
        "exception is RPC ran for more than set timeout (5000 ms) and will now be marked with an "
        "error\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN221", root


# https://github.com/NVIDIA/NeMo/issues/10997
@pytest.mark.parametrize(
    "log",
    [
        'The application appears to have been direct launched using "srun",\nbut OMPI was not built with '
        "SLURM's PMI support and therefore cannot\nexecute. There are several options "
        "for building PMI support "
        "under\nSLURM, depending upon the SLURM version you are using:\n",
        'The application appears to have been direct launched using "srun",\nbut OMPI '
        "was not built with SLURM "
        "support. This usually happens\nwhen OMPI was not configured --with-slurm and we weren't able\nto "
        "discover a SLURM installation in the usual places.\n",
    ],
)
def test_open_mpi_direct_launch_without_pmi(log: str) -> None:
    _check(log, "RUN552", {"problem": "mpi_without_slurm_pmi"})


def test_a_shell_session_without_an_error_stays_silent() -> None:
    # pytorch/elastic#165: the reporter's look at the host names, no failure line (the thread says the
    # rendezvous timed out; the paste does not)
    log = (
        "root@sh-0-0:/app# echo $VC_SH_0_HOSTS\n"
        "sh-db2kkt73p534vd-sh-0-0.sh-db2kkt73p534vd\n"
        "root@sh-0-0:/app# hostname\n"
        "sh-db2kkt73p534vd-sh-0-0\n"
        "root@sh-0-0:/app# cat /etc/hosts\n"
        "# Kubernetes-managed hosts file.\n"
        "127.0.0.1\tlocalhost\n"
    )
    assert _root(log) is None
