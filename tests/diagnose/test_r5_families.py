"""Families of r5's session (2026-12-06, misses of v18's released held-out half and v19's dev half labelled
nccl_timeout, collective_desync or rendezvous_init), each read at its source and pinned with the threads' real
lines, with a near miss per row:

- ProcessGroupNCCL's "[1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d
  key-value ..." cut before its "store->get('0') got error: ..." (the sentence exists only in the failed
  read's catch block; 1.x's "retreiving", cut right after "ncclUniqueId", wrapped over two lines): RUN222
  (rules/rdzv_setup.py);
- gloo's full-mesh set-up frames (gloo::rendezvous::Context::connectFullMesh over a store wait or get) in a c10
  record or a gdb stack, the message cut off: RUN221 (rdzv_setup);
- composer's "The world_size(8) > 1, but the distributed package is not available or has not been
  initialized": RUN224 (rdzv_setup);
- a master address that is a path or URL (DeepSpeed's runner taking a login script's echo from `ssh host
  hostname -I`, in its command line or its "Using IP address of ..." record; torchrun's option; MASTER_ADDR=):
  RUN224 (rdzv_setup);
- ps-lite's van used before it started ("Check failed: ready_ call Start() first", van.h): RUN224
  (rules/mxnet_kvstore.py);
- NCCL's API frames under their "p" aliases in a gdb or pystack dump of a hung rank (pncclCommInitRankConfig,
  pncclAllReduce, pncclCommAbort), and pystack's own thread header ("Traceback for thread N (python) [...]
  (most recent call last):") as a dump's header: RUN297 (rules/stuck_stacks.py);
- a Python exception whose last frame is the rendezvous itself (rendezvous.py's handlers, _create_c10d_store's
  TCPStore, an elastic rendezvous backend; Windows paths too) with a message no store row knows: RUN222 instead
  of a bare RUN132 (rules/pyexc.py).

Hangs whose paste holds only healthy lines were measured before anything was written for them: over every
released corpus case (tests/fixtures/corpus/**/*.jsonl without v19's held-out half, shared/corpus
real_logs_v1/v2; 4,196 distinct logs), the logs with no error line (no Error/Exception/Traceback/failed/WARN/
Killed/timeout word outside NCCL's INFO lines) whose last line has a given shape were labelled:

  shape of the last line                                   n   labels
  NCCL INFO init/connection line (no "-> N", no WARN)     19   other_ambiguous 8, nccl_timeout 7,
                                                                nccl_system_error 1, nccl_internal 1,
                                                                driver_env 1, rendezvous_init 1  (top 42 %)
    of which "Connected all rings/trees" / Init COMPLETE   2   other_ambiguous 1, nccl_timeout 1
    of which Channel / Ring / Tree connection lines        8   other_ambiguous 4, nccl_timeout 2, 2 others
  NCCL COLL trace line (opCount ...)                       5   collective_desync 3, other_ambiguous 1,
                                                                nccl_timeout 1  (60 %)
  DeepSpeed start-up [INFO] record (not sigkill_handler)   6   process_killed 2, nccl_timeout 2, 2 others
  "Rank N initialization finished"                         1   nccl_timeout 1
  launcher banner (OMP_NUM_THREADS, WORLD INFO DICT, ...)  9   process_killed 5, other_ambiguous 2, 2 others
  training progress line                                  19   other_ambiguous 13, nccl_timeout 3, 3 others

No shape reaches one class at 80 % over at least 5 cases (decoys and healthy runs end the same way as the
hangs), so no end-of-log reading was added: those cases stay silent, and the healthy tails below pin it.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

# https://github.com/mlfoundations/open_clip/issues/669 (the message cut mid-sentence; the title has the rest)
UID_CUT = """Traceback (most recent call last):
  File "/home/xxx/anaconda3/envs/CLIPSelf/lib/python3.9/site-packages/torch/nn/parallel/distributed.py", line 674, in __init__
    _verify_param_shape_across_processes(self.process_group, parameters)
  File "/home/xxx/anaconda3/envs/CLIPSelf/lib/python3.9/site-packages/torch/distributed/utils.py", line 118, in _verify_param_shape_across_processes
    return dist._verify_params_across_processes(process_group, tensors, logger)
RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value
"""
# torch 1.x's spelling, as a thread's title quotes it (cut before "store->get")
UID_CUT_1X = (
    "RuntimeError: [3] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value "
    "store by key '0'\n"
)
# a title cut right after the id's name
UID_CUT_SHORT = "[15] is setting up NCCL communicator and retrieving ncclUniqueId\n"
# the whole message: store_errors.py's row reads it (also wrapped over two lines) (same code, its error said)
UID_WHOLE = (
    "RuntimeError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
    "store by key '0', but store->get('0') got error: Socket Timeout\n"
)

UID_WRAPPED = (
    "torch.distributed.DistBackendError: [15] is setting up NCCL communicator and retrieving ncclUniqueId\n"
    "from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms\n"
)


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (UID_CUT, {"rank": 1, "waited_for_rank": 0}),
        (UID_CUT_1X, {"rank": 3, "waited_for_rank": 0}),
        (UID_CUT_SHORT, {"waited_for_rank": 0}),
        (UID_WHOLE, {"rank": 2, "store_error": "Socket Timeout"}),
        (UID_WRAPPED, {"store_key": "0"}),
    ],
)
def test_nccl_unique_id_store_read(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN222", facts)


# https://github.com/RLinf/RLinf/issues/925 (a Ray actor's c10 record, cut to its last frames)
GLOO_FRAMES = """(EnvWorker pid=531820, ip=172.16.119.17) frame #10: gloo::rendezvous::PrefixStore::wait(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > const&, std::chrono::duration<long, std::ratio<1l, 1000l> > const&) + 0x109 (0x7fe21798e0f9 in /home/zy0021-lr/anaconda3/envs/rlinf_0320/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)
(EnvWorker pid=531820, ip=172.16.119.17) frame #11: gloo::transport::tcp::Context::createAndConnectAllPairs(std::shared_ptr<gloo::IStore>) + 0xa18 (0x7fe2179ab5f8 in /home/zy0021-lr/anaconda3/envs/rlinf_0320/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)
(EnvWorker pid=531820, ip=172.16.119.17) frame #12: gloo::rendezvous::Context::connectFullMesh(std::shared_ptr<gloo::rendezvous::Store>, std::shared_ptr<gloo::transport::Device>&) + 0x5c (0x7fe21798aebc in /home/zy0021-lr/anaconda3/envs/rlinf_0320/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)
"""
# 1.x's shape: the store read through ProcessGroupGloo's adapter, connectFullMesh taking the store by reference
GLOO_FRAMES_1X = """frame #2: c10d::TCPStore::get(std::string const&) + 0x5c (0x7f3b8c1a2b3c in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
frame #3: c10d::PrefixStore::get(std::string const&) + 0x3a (0x7f3b8c1a0d1a in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
frame #4: c10d::ProcessGroupGloo::GlooStore::get(std::string const&) + 0x2b (0x7f3b8c1f2e2b in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
frame #5: gloo::rendezvous::PrefixStore::get(std::string const&) + 0x33 (0x7f3b8d6a3c13 in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
frame #6: gloo::rendezvous::Context::connectFullMesh(gloo::rendezvous::Store&, std::shared_ptr<gloo::transport::Device>&) + 0x162 (0x7f3b8d6a1a62 in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
frame #7: c10d::ProcessGroupGloo::ProcessGroupGloo(c10::intrusive_ptr<c10d::Store, c10::detail::intrusive_target_default_null_type<c10d::Store> > const&, int, int, c10::intrusive_ptr<c10d::ProcessGroupGloo::Options, c10::detail::intrusive_target_default_null_type<c10d::ProcessGroupGloo::Options> >) + 0x41b (0x7f3b8c1f7a5b in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
"""
# a gdb stack of a rank that hangs there (a store wait under the full mesh)
GLOO_GDB = """(gdb) bt
#0  0x00007f1c2a6e4c7f in poll () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f1b8c1a9e40 in c10d::detail::TCPClient::receiveValue() () from /usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so
#2  0x00007f1b8c1ab111 in c10d::TCPStore::doWait(c10::ArrayRef<std::string>, std::chrono::duration<long, std::ratio<1l, 1000l> >) () from /usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so
#3  0x00007f1b8d6a3c13 in gloo::rendezvous::PrefixStore::wait(std::vector<std::string> const&, std::chrono::duration<long, std::ratio<1l, 1000l> > const&) () from /usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so
#4  0x00007f1b8d6a1a62 in gloo::rendezvous::Context::connectFullMesh(std::shared_ptr<gloo::rendezvous::Store>, std::shared_ptr<gloo::transport::Device>&) () from /usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so
"""


@pytest.mark.parametrize("log", [GLOO_FRAMES, GLOO_FRAMES_1X, GLOO_GDB])
def test_gloo_full_mesh_store_read(log: str) -> None:
    _check(log, "RUN221")


# connectFullMesh failing in the pairs' connect (no store frame under it): not a store read
GLOO_PAIR_CONNECT = """frame #3: gloo::transport::tcp::Pair::connect(std::vector<unsigned char, std::allocator<unsigned char> > const&) + 0x1b9 (0x7f3b8d6c5e19 in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
frame #4: gloo::rendezvous::Context::connectFullMesh(gloo::rendezvous::Store&, std::shared_ptr<gloo::transport::Device>&) + 0x18c (0x7f3b8d6a1a8c in /opt/conda/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)
"""


def test_gloo_full_mesh_without_a_store_read_is_not_the_rendezvous() -> None:
    root = _root(GLOO_PAIR_CONNECT)
    assert root is None or root.code != "RUN221", root


# https://github.com/mosaicml/diffusion/issues/22 (a terminal wrap, "$" where it cut)
COMPOSER = """RuntimeError: The world_size(8) > 1, but the distributed package is not available or has not been initialized. Please check y$
u have initialized the distributed runtime and that PyTorch has been built with distributed support. If calling this function
outside Trainer, please ensure that `composer.utils.dist.initialize_dist` has been called first.
"""
# the copies in llm-foundry / streaming, without the Trainer sentence
COMPOSER_COPY = (
    "RuntimeError: The world_size(2) > 1, but the distributed package is not available or has not been "
    "initialized. Please check you have initialized the distributed runtime and that PyTorch has been built "
    "with distributed support.\n"
)


@pytest.mark.parametrize(("log", "n"), [(COMPOSER, 8), (COMPOSER_COPY, 2)])
def test_composer_world_size_without_a_process_group(log: str, n: int) -> None:
    _check(log, "RUN224", {"world_size": n})


# https://github.com/huggingface/accelerate/issues/2249 (Accelerate's DeepSpeed pdsh launch; the nodes' login
# scripts echo the files they source, so `ssh host hostname -I` answered "/root/cuda11.8.bashrc ...")
DS_PATH_ADDR = """; export ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE=none; export ACCELERATE_DEEPSPEED_ZERO3_INIT=false;  cd /xxx; /data/miniconda3/bin/python -u -m deepspeed.launcher.launch --world_info=eyI5LjkxLjQuMjUx
IjogWzAsIDEsIDIsIDMsIDQsIDUsIDYsIDddLCAiOS4yMDYuNjMuNTkiOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgN119 --node_rank=%n --master_addr=/root/cuda11.8.bashrc --master_port=45459 --argsxxx --save_steps=5000 --logging_dir=log --report_to=tensorboard
9.206.63.59: /root/cuda11.8.bashrc
9.206.63.59: /root/custom.bashrc
9.91.4.251: /root/cuda11.8.bashrc
9.91.4.251: Now using node v12.18.3 (npm v6.14.6)
"""
# DeepSpeed's runner (launcher/runner.py) says which address it took
DS_RUNNER_RECORD = (
    "[2023-11-28 10:12:01,512] [INFO] [runner.py:463:main] Using IP address of /etc/profile.d/modules.sh "
    "for node gpu-a01\n"
)
TORCHRUN_URL_ADDR = (
    "torchrun --nnodes=2 --node_rank=1 --nproc_per_node=8 --master_addr=tcp://10.1.0.4 --master_port=29500 "
    "train.py\n"
)
ENV_PATH_ADDR = "MASTER_ADDR=/tmp/hostfile MASTER_PORT=29500 WORLD_SIZE=16 RANK=8\n"


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (DS_PATH_ADDR, {"master_addr": "/root/cuda11.8.bashrc"}),
        (DS_RUNNER_RECORD, {"master_addr": "/etc/profile.d/modules.sh", "host": "gpu-a01"}),
        (TORCHRUN_URL_ADDR, {"master_addr": "tcp://10.1.0.4"}),
        (ENV_PATH_ADDR, {"master_addr": "/tmp/hostfile"}),
    ],
)
def test_master_address_that_is_a_path(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN224", facts)


# https://github.com/apache/mxnet/issues/1458 (a server-role process under the SGE launcher)
PS_LITE_VAN = """[13:04:31] ./dmlc-core/include/dmlc/logging.h:215: [13:04:31] ./ps-lite/include/ps/internal/van.h:56: Check failed: ready_ call Start() first
Traceback (most recent call last):
  File "train_mnist.py", line 127, in <module>
    train_model.fit(args, net, get_iterator)
  File "mxnet/example/image-classification/train_model.py", line 11, in fit
    head = '%(asctime)-15s Node[' + str(kv.rank) + '] %(message)s'
  File "mxnet/python/mxnet/kvstore.py", line 281, in rank
    check_call(_LIB.MXKVStoreGetRank(self.handle, ctypes.byref(rank)))
  File "mxnet/python/mxnet/base.py", line 77, in check_call
    raise MXNetError(py_str(_LIB.MXGetLastError()))
mxnet.base.MXNetError: [13:04:31] ./ps-lite/include/ps/internal/van.h:56: Check failed: ready_ call Start() first
"""
# the same check under glog's terminate record (a C++ program on ps-lite, BytePS's fork)
PS_LITE_VAN_TERMINATE = """terminate called after throwing an instance of 'dmlc::Error'
  what():  [08:01:12] 3rdparty/ps-lite/include/ps/internal/van.h:61: Check failed: ready_ call Start() first
Aborted (core dumped)
"""


@pytest.mark.parametrize("log", [PS_LITE_VAN, PS_LITE_VAN_TERMINATE])
def test_ps_lite_van_used_before_start(log: str) -> None:
    _check(log, "RUN224", {"problem": "van_not_started"})


# https://github.com/NVIDIA/nccl/issues/1774 (cuda-gdb on a hung rank: a lazy recv's communicator init)
GDB_P_INIT = """Thread 1 "python" received signal SIGINT, Interrupt.
0x00007f68194a8adf in clock_nanosleep () from /lib/x86_64-linux-gnu/libc.so.6
(cuda-gdb) bt
#0  0x00007f68194a8adf in clock_nanosleep () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f68194b5a27 in nanosleep () from /lib/x86_64-linux-gnu/libc.so.6
#2  0x00007f68194e572c in usleep () from /lib/x86_64-linux-gnu/libc.so.6
#3  0x00007f67471b224b in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2
#4  0x00007f67471b31e1 in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2
#5  0x00007f67471b474d in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2
#6  0x00007f67471be402 in pncclCommInitRankConfig () from /lib/x86_64-linux-gnu/libnccl.so.2
#7  0x00007f67a9ff6236 in c10d::NCCLComm::create(int, int, ncclUniqueId, signed char, ncclConfig_v22700&) () from /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so
#8  0x00007f67aa03146d in c10d::ProcessGroupNCCL::initNCCLComm(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, c10::Device&, c10d::OpType, int, bool)
    () from /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so
#9  0x00007f67aa04d7ca in c10d::ProcessGroupNCCL::recv(std::vector<at::Tensor, std::allocator<at::Tensor> >&, int, int) ()
   from /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so
"""
GDB_P_ALLREDUCE = """(gdb) bt
#0  0x00007f3a1c2b1d40 in ?? () from /usr/lib/x86_64-linux-gnu/libnccl.so.2
#1  0x00007f3a1c2b5e11 in pncclAllReduce () from /usr/lib/x86_64-linux-gnu/libnccl.so.2
#2  0x00007f3a5d0c1a2b in c10d::ProcessGroupNCCL::allreduce_impl(at::Tensor&, c10d::AllreduceOptions const&) () from /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so
"""
GDB_P_ABORT = """(gdb) bt
#0  0x00007f3a1c2b1d40 in sched_yield () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f3a1c2b5e11 in ?? () from /usr/lib/x86_64-linux-gnu/libnccl.so.2
#2  0x00007f3a1c2b6e22 in pncclCommAbort () from /usr/lib/x86_64-linux-gnu/libnccl.so.2
#3  0x00007f3a5d0c1a2b in c10d::NCCLComm::abort(std::optional<std::string>) () from /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so
"""

# pystack's native frame of the same alias
PYSTACK_P = """Traceback for thread 4242 (python) [] (most recent call last):
    (Python) File "/workspace/train.py", line 88, in train_step
        dist.all_reduce(grad)
    (C) File "???", line 0, in pncclAllReduce (libnccl.so.2)
"""


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (PYSTACK_P, {"frame": "pncclAllReduce"}),
        (GDB_P_INIT, {"frame": "pncclCommInitRankConfig"}),
        (GDB_P_ALLREDUCE, {"frame": "pncclAllReduce"}),
        (GDB_P_ABORT, {"frame": "pncclCommAbort", "in_teardown": True}),
    ],
)
def test_nccl_p_aliases_in_a_hung_ranks_stack(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN297", facts)


# https://github.com/RVC-Project/Retrieval-based-Voice-Conversion-WebUI/issues/2217 (Windows, TCPStore raised)
STORE_RAISED_WIN = """Process Process-1:
Traceback (most recent call last):
  File "multiprocessing\\process.py", line 315, in _bootstrap
  File "multiprocessing\\process.py", line 108, in run
  File "D:\\test\\py\\ai\\RVC1006Nvidia\\infer\\modules\\train\\train.py", line 132, in run
    dist.init_process_group(
  File "D:\\test\\py\\ai\\RVC1006Nvidia\\runtime\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 888, in init_process_group
    store, rank, world_size = next(rendezvous_iterator)
  File "D:\\test\\py\\ai\\RVC1006Nvidia\\runtime\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 245, in _env_rendezvous_handler
    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)
  File "D:\\test\\py\\ai\\RVC1006Nvidia\\runtime\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 176, in _create_c10d_store
    return TCPStore(
RuntimeError: unmatched '}' in format string
"""
# an elastic backend's own raise with a message no store row knows
STORE_RAISED_ELASTIC = """Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/agent/server/api.py", line 489, in _rendezvous
    rdzv_info = spec.rdzv_handler.next_rendezvous()
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py", line 55, in next_rendezvous
    self._store = TCPStore(  # type: ignore[call-arg]
RuntimeError: unknown error
"""


@pytest.mark.parametrize("log", [STORE_RAISED_WIN, STORE_RAISED_ELASTIC])
def test_exception_raised_by_the_rendezvous(log: str) -> None:
    _check(log, "RUN222", {"store_op": "create"})


# An exception raised under init_process_group but past the rendezvous (distributed_c10d.py's own check of its
# arguments): not the meeting's
RAISED_AFTER_RDZV = """Traceback (most recent call last):
  File "/workspace/train.py", line 61, in main
    dist.init_process_group("nccl", init_method=url, world_size=ws, rank=r, pg_options=opts)
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 1170, in init_process_group
    default_pg, _ = _new_process_group_helper(
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 1299, in _new_process_group_helper
    raise TypeError("Expected pg_options argument to be of type ProcessGroupNCCL.Options")
TypeError: Expected pg_options argument to be of type ProcessGroupNCCL.Options
"""


@pytest.mark.parametrize(
    "log",
    [
        # a healthy NCCL INFO line that names the unique id, and the torch debug record of its broadcast
        "node1:4242:4242 [0] NCCL INFO ncclCommInitRank comm 0x55d0 rank 0 nranks 8 cudaDev 0 busId 1000 - Init "
        "COMPLETE\n",
        "[I1206 10:00:00.000 ProcessGroupNCCL.cpp:2100] [PG ID 0 PG GUID 0 Rank 1] ProcessGroupNCCL broadcast "
        "unique ID through store took 0.12 ms\n",
        # composer's healthy start-up
        "INFO composer.utils.dist: Initialized torch.distributed with world_size 8, rank 0\n",
        # master addresses as the user typed them, or real hosts
        "torchrun --nnodes=2 --master_addr=$MASTER_ADDR --master_port=29500 train.py\n",
        'torchrun --nnodes=2 --master_addr="$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)" '
        "--master_port=29500 /workspace/train.py\n",
        "[2023-11-28 10:12:01,512] [INFO] [runner.py:463:main] Using IP address of 10.3.3.1 for node gpu-a01\n",
        "export MASTER_ADDR=node-01.cluster.local; export MASTER_PORT=29500; cd /workspace/run\n",
        "torchrun --nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=/shared/rdzv/file train.py\n",
        # other programs' "call start() first"
        "RuntimeError: Producer not started. Call start() first.\n",
        "producer not started. call start() first.\n",
        # a gdb frame of an NCCL alias that does not wait
        "(gdb) bt\n#0  0x00007f3a1c2b5e11 in pncclGetVersion () from /usr/lib/x86_64-linux-gnu/libnccl.so.2\n",
        # healthy tails of a hang-shaped log: NCCL's connection set-up, a DeepSpeed banner, a rank's init
        "[default3]:dgx046:1564837:1565729 [3] NCCL INFO Connected all rings\n"
        "[default0]:dgx046:1564834:1565726 [0] NCCL INFO Connected all trees\n",
        "gpu1504: [2023-03-24 10:26:51,118] [INFO] [launch.py:142:main] WORLD INFO DICT: {'gpu1504': [0], "
        "'gpu1505': [0]}\n",
        "**yolox.core.launch:_distributed_worker:119 - Rank 0 initialization finished.**\n",
    ],
)
def test_near_misses_stay_silent(log: str) -> None:
    assert _root(log) is None, _root(log)


def test_exception_past_the_rendezvous_is_its_own() -> None:
    root = _root(RAISED_AFTER_RDZV)
    assert root is not None and root.code != "RUN222", root


# =================================================================================================================
# r5's session of 2026-12-07 (misses of v19's released held-out half and v20's dev half labelled nccl_timeout or
# collective_desync), each family read at its source:
#
# - the watchdog's timeout record cut inside the work's name ("...operation timeout: WorkNCC", after a tqdm bar
#   that never printed its newline): RUN151 (rules/timeouts.py's cut row);
# - a Python stack cut at DDP's reducer check (`self.reducer.prepare_for_backward(...)` 1.0-1.6,
#   `self.reducer._rebuild_buckets()` 1.7+, `self.reducer.prepare_for_forward()`), whose one error there is
#   "Expected to have finished reduction in the prior iteration": RUN202 at tier 2 (rules/cut_phases.py);
# - torch.distributed.pipelining's / PiPPy's "Failed to run stage backward:" report listing an output and the
#   gradient sent back for it with different shapes: RUN513 (rules/model_mismatch.py);
# - a thread title that says a collective hangs (RUN151, tier 1) or that the job hangs at the end of its data
#   (RUN201, tier 1) (rules/hang_titles.py);
# - the ranks' own debug prints of one template, around a named collective, with different torch.Size shapes
#   (RUN201, tier 1) (rules/desync_hints.py).
# =================================================================================================================

# https://github.com/modelscope/ms-swift/issues/3564 (the record cut at the screen's edge, after the bar)
WATCHDOG_AFTER_BAR = (
    "Train:   0%|" + " " * 200 + "| 0/969 [00:00<?, ?it/s][rank2]:[E319 14:06:30.835182369 "
    "ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCC\n"
)


@pytest.mark.parametrize(
    "log",
    [
        WATCHDOG_AFTER_BAR,
        "[rank5]:[E ProcessGroupNCCL.cpp:563] [Rank 5] Watchdog caught collective operation timeout: Work\n",
        "[E ProcessGroupNCCL.cpp:821] [Rank 0] Watchdog caught collective operation timeout: W\n",
        "[E ProcessGroupHCCL.cpp:600] [Rank 3] Watchdog caught collective operation timeout: WorkHC\n",
    ],
)
def test_watchdog_record_cut_inside_the_work_name(log: str) -> None:
    _check(log, "RUN151")
    root = _root(log)
    assert root is not None and root.facts.get("inferred_from") != "words", root


# -- DDP's reducer check ---------------------------------------------------------------------------------------
# https://github.com/zhanghang1989/PyTorch-Encoding/issues/312 (torch 1.4, mp.spawn; the RuntimeError cut off)
REDUCER_1_4 = """Traceback (most recent call last):
  File "train_dist.py", line 346, in <module>
    main()
  File "/home/u/.conda/envs/e/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 118, in join
    raise Exception(msg)
Exception:

-- Process 0 terminated with the following error:
Traceback (most recent call last):
  File "/home/u/.conda/envs/e/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 19, in _wrap
    fn(i, *args)
  File "/home/u/PyTorch-Encoding/experiments/recognition/train_dist.py", line 256, in train
    output = model(data)
  File "/home/u/.conda/envs/e/lib/python3.7/site-packages/torch/nn/modules/module.py", line 532, in __call__
    result = self.forward(*input, **kwargs)
  File "/home/u/.conda/envs/e/lib/python3.7/site-packages/torch/nn/parallel/distributed.py", line 464, in forward
    self.reducer.prepare_for_backward([])
"""
# 1.7-2.x: the check at the start of forward (the title has the message)
REDUCER_2X = """[rank1]: Traceback (most recent call last):
[rank1]:   File "/workspace/train.py", line 88, in <module>
[rank1]:     loss = model(batch).sum()
[rank1]:   File "/usr/local/lib/python3.10/dist-packages/torch/nn/parallel/distributed.py", line 1636, in forward
[rank1]:     inputs, kwargs = self._pre_forward(*inputs, **kwargs)
[rank1]:   File "/usr/local/lib/python3.10/dist-packages/torch/nn/parallel/distributed.py", line 1528, in _pre_forward
[rank1]:     if torch.is_grad_enabled() and self.reducer._rebuild_buckets():
"""
# mmcv's MMDistributedDataParallel.train_step, its own copy of the check, on Windows
REDUCER_MMCV = """Traceback (most recent call last):
  File "D:\\work\\mmdet\\tools\\train.py", line 187, in <module>
    main()
  File "D:\\conda\\lib\\site-packages\\mmcv\\parallel\\distributed.py", line 42, in train_step
    and self.reducer._rebuild_buckets()):
"""


# 1.0-1.3, with find_unused_parameters
REDUCER_1_1 = """Traceback (most recent call last):
  File "main.py", line 120, in train
    out = net(x)
  File "/opt/conda/lib/python3.6/site-packages/torch/nn/parallel/distributed.py", line 376, in forward
    self.reducer.prepare_for_backward(list(_find_tensors(output)))
"""


@pytest.mark.parametrize("log", [REDUCER_1_4, REDUCER_1_1])
def test_stack_cut_at_the_reducer_check(log: str) -> None:
    _check(log, "RUN202", {"phase": "ddp_reducer_check", "cut": True})


@pytest.mark.parametrize("log", [REDUCER_2X, REDUCER_MMCV])
def test_stack_cut_at_the_bucket_rebuild_is_the_same_error(log: str) -> None:
    _check(log, "RUN202", {"cut": True})


@pytest.mark.parametrize(
    ("tail", "not_code"),
    [
        # the exception follows: its own row decides (here memory)
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity)\n",
            "RUN202",
        ),
        # the stack goes on below the reducer's line: it died in another frame
        (
            '  File "/usr/lib/python3/dist-packages/torch/nn/modules/conv.py", line 443, in forward\n'
            "    return self._conv_forward(input, self.weight, self.bias)\n",
            "RUN202",
        ),
    ],
)
def test_a_reducer_frame_that_is_not_the_end_of_the_paste(tail: str, not_code: str) -> None:
    root = _root(REDUCER_1_4 + tail)
    assert root is None or root.code != not_code, root


def test_the_reducer_line_outside_a_stack_stays_silent() -> None:
    log = (
        "# DDP calls self.reducer.prepare_for_backward(list(_find_tensors(output))) after forward\n"
        "epoch 1 step 20 loss 0.31\n"
    )
    assert _root(log) is None, _root(log)


# -- a pipeline stage's backward report ------------------------------------------------------------------------
# https://github.com/pytorch/PiPPy/issues/1054
STAGE_BWD = """RuntimeError:
        Failed to run stage backward:
        Stage output: ('Tensor(torch.Size([10]), grad=True)',)
        Output gradient: ['Tensor(torch.Size([1, 10]), grad=False)']
        Input: ['Tensor(torch.Size([1, 10]), grad=False)']
[rank1]:V0411 17:27:30.064000 140419639100544 ../pippy/pippy/PipelineStage.py:220] [1] Forwarded chunk 0
"""
# 2.5+: the dtype in each entry, rank-prefixed
STAGE_BWD_25 = """[rank0]: RuntimeError:
[rank0]:         Failed to run stage backward:
[rank0]:         Stage output: ('Tensor(torch.Size([2, 128, 512]), grad=True, dtype=torch.bfloat16)',)
[rank0]:         Output gradient: ('Tensor(torch.Size([2, 64, 512]), grad=False, dtype=torch.bfloat16)',)
[rank0]:         Input: ('Tensor(torch.Size([2, 128, 512]), grad=True, dtype=torch.bfloat16)',)
"""


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (STAGE_BWD, {"output_shape": "[10]", "grad_shape": "[1, 10]"}),
        (STAGE_BWD_25, {"output_shape": "[2, 128, 512]", "grad_shape": "[2, 64, 512]"}),
    ],
)
def test_stage_backward_with_shapes_that_differ(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN513", facts)


def test_stage_backward_with_matching_shapes_is_its_cause() -> None:
    # the wrapper re-raises any backward error: the chained one (memory here) is the cause
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.02 GiB is free.\n\nThe above exception was the direct cause of the following "
        "exception:\n\n" + STAGE_BWD_25.replace("[2, 64, 512]", "[2, 128, 512]")
    )
    _check(log, "RUN101")
    same = STAGE_BWD_25.replace("[2, 64, 512]", "[2, 128, 512]")
    root = _root(same)
    assert root is None or root.code != "RUN513", root


# -- titles that say a collective hangs ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "title",
    [
        "NCCL hang on socket recv()",  # https://github.com/NVIDIA/nccl/issues/238
        "all reduce hangs (NCCL 2.8.0.3)",
        "dist.barrier() stuck forever",
        "Deadlock in all_gather with 8 GPUs",
        "Training freezes at the allreduce after a few hundred steps",
        "[BUG] broadcast hangs with ZeRO-3 on 2 nodes",
    ],
)
def test_title_of_a_collective_that_hangs(title: str) -> None:
    _check(title + "\n", "RUN151", {"read_as": "title", "kind": "collective_hang"})


@pytest.mark.parametrize(
    "title",
    [
        # https://github.com/huggingface/transformers/issues/17478
        "Training hangs in the end while calling dist.barrier()",
        "DDP stuck after the last batch of the epoch",
        "Hangs at the end of epoch with multiple GPUs",
    ],
)
def test_title_of_a_hang_at_the_end_of_the_data(title: str) -> None:
    _check(title + "\n", "RUN201", {"read_as": "title", "kind": "uneven_inputs"})


@pytest.mark.parametrize(
    "log",
    [
        "Dataloader hangs with num_workers > 0\n",
        "vLLM server hangs on startup\n",
        "How to debug NCCL hang\n",
        "set NCCL_BLOCKING_WAIT=1 to avoid the allreduce hang\n",
        "Fix NCCL hang in all_reduce (#1234)\n",
        "Collectives could hang if ranks call them in different orders\n",
        "[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this "
        "process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
        "incorrect.Specify device_ids in barrier() to force use of a particular device.\n",
        "Training hangs at the end of initialization\n",
        "NCCL init hangs with 2 nodes\n",
        "Stuck at NCCL INFO Bootstrap : Using eth0\n",
        "ncclCommInitRank hang when using new_group\n",
        # more than a title: a program's output around the words
        "epoch 3 done\nNCCL hang detector: enabled\nepoch 4 done\n",
        "Train:   0%|          | 0/969 [00:00<?, ?it/s]\n",
    ],
)
def test_hang_words_that_are_no_report_stay_silent(log: str) -> None:
    assert _root(log) is None, _root(log)


# -- ranks' own prints of the tensor sizes they hand one collective -------------------------------------------
# https://github.com/NVIDIA/nccl/issues/1417 (rank 0's tensor is smaller than the others')
RANK_SHAPES = """Test 1 log:
    # rank 0 shape is 409600, rank != 0 shape is 32768000 will hang
        # Rank 7 tensor before allreduce: torch.Size([32768000]) 1.0
        # Rank 6 tensor before allreduce: torch.Size([32768000]) 1.0
        # Rank 0 tensor before allreduce: torch.Size([409600]) 1.0
        # Rank 1 tensor before allreduce: torch.Size([32768000]) 1.0
        # Rank 0 tensor after allreduce: torch.Size([409600]) 8.0 8.0 8.0 8.0
"""
RANK_SHAPES_PREFIXED = """[rank0]: step 12 rank=0 all_gather input torch.Size([4, 1024])
[rank1]: step 12 rank=1 all_gather input torch.Size([3, 1024])
"""


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (RANK_SHAPES, {"kind": "rank_shapes_differ", "op": "allreduce", "odd_ranks": [0]}),
        (RANK_SHAPES_PREFIXED, {"kind": "rank_shapes_differ", "op": "all_gather"}),
    ],
)
def test_ranks_print_different_shapes_around_a_collective(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN201", facts)


@pytest.mark.parametrize(
    "log",
    [
        # the same shape on every rank
        RANK_SHAPES.replace("409600", "32768000"),
        # shapes that differ with no collective named (a batch's shape varies by design)
        "rank 0 batch torch.Size([8, 512])\nrank 1 batch torch.Size([8, 498])\n",
        "CHOSEN LOGPS SHAPE: torch.Size([1])\nCHOSEN LOGPS SHAPE: torch.Size([5])\n",
        # one rank's prints only
        "rank 0 before allreduce torch.Size([16])\nrank 0 after allreduce torch.Size([16])\n",
        # an object collective takes any size
        "rank 0 all_gather_object preds torch.Size([1541])\nrank 1 all_gather_object preds torch.Size([1547])\n",
    ],
)
def test_rank_shape_prints_that_agree_or_may_differ_stay_silent(log: str) -> None:
    root = _root(log)
    assert root is None or root.code != "RUN201", root
