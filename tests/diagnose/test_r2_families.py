"""One-line pastes (a thread's title, one quoted error line): the classes a title is read for beyond the
device OOM (doctor/diagnose/rules/vocabulary.py, `_TITLE_WORDS`), the words that need no error marker of
a program's, and NCCL's and CUDA's own texts that name their failure on one line.

Each positive is the family's wording in a person's title or a retyped line; each near-miss shares its
words and names no failure (a how-to question, a request, a setting, a retry, a healthy print).
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.event import Hit
from pgdoctor.diagnose.rules import vocabulary
from pgdoctor.diagnose.text.normalize import Line
from tests.helpers.diagnose_root import failure_findings, root_finding

TITLES = [
    # a collective timeout named with its subject (v19A-nccl_timeout-001, v19C-nccl_timeout-004)
    (
        "Watchdog caught collective operation timeout when training ddpm using train_unconditional.py",
        "collective_timeout",
    ),
    ("nccl timeout on train_controlnet_flux.py when doing multigpu training", "collective_timeout"),
    ("[Bug] Allreduce timed out after the first epoch on 16 nodes", "collective_timeout"),
    ("HCCL timeout during pipeline parallel training on Ascend 910B", "collective_timeout"),
    ("Gloo barrier times out at the end of validation", "collective_timeout"),
    ("NCCL timeout in backward pass with FSDP", "collective_timeout"),
    # a refused or reset connection of the job's transport (v18D-nccl_system_error-004)
    ("NCCL Connection refused when run horovod with mpijob", "nccl_network"),
    ("Gloo connection reset by peer on multi-node training", "nccl_network"),
    ("Connection reset by peer between ranks on a RoCE cluster", "nccl_network"),
    # the start-up's store or rendezvous that timed out or refused (before the transport's row)
    ("Rendezvous timeout when launching torchrun on two nodes", "rendezvous"),
    ("TCPStore connection refused on the second node", "rendezvous"),
    ("init_process_group timed out with 4 nodes", "rendezvous"),
    # SIGKILL and exit -9 (v18H-process_killed-001 has a marker; the title form has none)
    ("deepspeed training exits with return code = -9", "host_oom"),
    ("Training process gets SIGKILL after the first epoch", "host_oom"),
    ("torchrun: exitcode -9 on rank 3 while loading the dataset", "host_oom"),
    # a named fatal signal (v19E-process_killed-004, v13l-process_killed-001)
    ("An error : <Signals.SIGSEGV: 11>", "process_crash"),
    ("使用 DeepSpeed ZeRO-3 平均分配显存 运行一段时间后报 Signal 7 (SIGBUS) received", "process_crash"),
    ("Dataloader worker died with <Signals.SIGABRT: 6> during evaluation", "process_crash"),
    # the shell's report with "(core dumped)" written against it (v18D-process_killed-001)
    ("除 Segmentation fault(core dumped) 以外无其他输出", "process_crash"),
]


@pytest.mark.parametrize(("title", "category"), TITLES)
def test_a_title_in_the_words_of_its_class_reaches_that_class(title: str, category: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.category == category, (title, root)


def _hit(text: str) -> Hit:
    return Hit("job.log", [Line(text, 1)], 0)


def test_a_title_the_net_reads_is_marked_as_a_title() -> None:
    root = root_finding("nccl timeout on train_controlnet_flux.py when doing multigpu training\n")
    assert root is not None and root.facts.get("inferred_from") == "words"
    assert root.facts.get("read_as") == "title"
    assert vocabulary._title(_hit("NCCL Connection refused when run horovod with mpijob"))


QUIET_TITLES = [
    # questions and requests
    "How to increase the NCCL timeout for a long evaluation?",
    "NCCL timeout should be configurable per process group",
    "Allow a custom barrier timeout in accelerate",
    "[Feature] expose the rendezvous timeout in the launcher",
    # settings and healthy prints with the same words
    "Set NCCL timeout to 2 hours for the allreduce",
    "collective timeout 1800 s, barrier timeout 600 s",
    "ProcessGroupNCCL initialization options: TIMEOUT(ms): 1800000",
    "rdzv_backend=c10d rdzv_endpoint=10.0.0.1:29400 rdzv_conf timeout=900",
    "Rendezvous timeout is 900 seconds by default",
    "allreduce finished with 0 timeouts in 1000 steps",
    "HCCL_EXEC_TIMEOUT=1800 collective timeout in seconds",
    "NCCL connection refused, retrying in 1 s (attempt 2 of 30)",
    "Sending SIGKILL to the remaining workers of the pool",
    "torchrun should send SIGTERM before SIGKILL",
    "faulthandler registered for SIGSEGV and SIGBUS",
    "signal.signal(signal.SIGSEGV, handler)",
    "exit code -90 from the data service",
    # prose of a document about the failure, not a report of one
    "The other ranks wait in the collective until they time out.",
    "Rank 0 dies at start-up and the others time out waiting for the store unless it is restarted.",
    # the words apart, in different clauses
    "NCCL all_reduce benchmark: 180 GB/s; connection pool warmed up in 2 s",
]


@pytest.mark.parametrize("title", QUIET_TITLES)
def test_a_question_a_setting_or_a_healthy_print_with_those_words_stays_silent(title: str) -> None:
    assert failure_findings(title + "\n") == [], title


# The same words without a marker in a longer log are not a title: a line among others needs the marker.
def test_a_line_of_a_longer_log_without_a_marker_stays_silent() -> None:
    log = (
        "epoch 1 done\nnccl timeout on train_controlnet_flux.py when doing multigpu training\nepoch 2 done\n"
    )
    assert failure_findings(log) == []


# NCCL's and CUDA's own texts that name their failure in one line, retyped or by number.
TEXTS = [
    # ncclInternalError's text, retyped ("this is sue") without the macro's file:line (v18D-...-002)
    ("Failed, NCCL error 'internal error - please report this is sue to the NCCL developers'", "nccl_usage"),
    ("ncclCommInitRank: internal error - please report this issue to the NCCL developers", "nccl_usage"),
    # CUDA's number of the system's readiness after the word CUDA (v19F-driver_env-005)
    (
        "CUDA Error 802 on all H200 multi-GPU HF Jobs with vLLM, across CUDA 12 and CUDA 13 images",
        "driver_env",
    ),
    ("RuntimeError: cuda runtime error (802) on the HGX node", "driver_env"),
    ("CUDA error 803 after the driver update", "driver_env"),
    # a build without NCCL: NCCL asked of Windows (v18B-driver_env-003), Caffe's message (v19H-driver_env-001)
    ("Using Mulit-GPU in windows system with NCCL error", "driver_env"),
    ("RuntimeError: NCCL error on Windows 11 with torchrun", "driver_env"),
    ("it said Multi-GPU execution not avilable -rebuild with USE_NCCL. CAN'T use two GPUS???", "driver_env"),
    ("F0101 caffe.cpp:250] Multi-GPU execution not available - rebuild with USE_NCCL", "driver_env"),
    # NCCL's own out-of-memory (device buffers) named in a title (v18A-cuda_oom-001)
    ("NCCL out of memory error after updating to PyTorch 2.7", "cuda_oom"),
    # gloo's set-up message ended by a title (v19B-nccl_system_error-002)
    ("[QUESTION] Gloo connectFullMesh failed when the number of nodes exceeds 60", "nccl_network"),
    ("Gloo connectFullMesh failed", "nccl_network"),
    # the ncclUniqueId store read cut at the end of a one-line paste (v19C-rendezvous_init-003)
    (
        "NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but "
        "store->get('0') got error",
        "rendezvous",
    ),
    # DeepSpeed's CPU optimizer whose op never loaded, at its __del__ (v18E-driver_env-005)
    ("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'", "driver_env"),
    ("AttributeError: 'DeepSpeedCPUAdagrad' object has no attribute 'ds_opt_adagrad'", "driver_env"),
    # torch's store exception by its class name (v18D-rendezvous_init-003)
    ("`DistStoreError` timeout during sglang initialization when `rollout_tp=16` (cross-node)", "rendezvous"),
]


@pytest.mark.parametrize(("line", "category"), TEXTS)
def test_a_text_that_names_its_failure_reaches_its_class(line: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.category == category, (line, root)


QUIET_TEXTS = [
    # the internal-error words of another program, and CUDA's low or other numbers
    "Internal error - please report this issue to the developers of the plugin",
    "HTTP error 802 from the licence server",
    "CUDA error 8020 in the telemetry export",
    "Error 802 in the payment gateway",
    # NCCL and Windows in a graceful fallback; NCCL's buffer setting beside an OOM that went away
    "Windows detected: NCCL is not available, using the gloo backend",
    "NCCL_BUFFSIZE lowered to 2 MB, out of memory gone",
    # the op's handle in a frame's source line, not the failure
    "    self.ds_opt_adam = CPUAdamBuilder().load()",
    # the store's class in an import line
    "from torch.distributed import DistStoreError, TCPStore",
]


@pytest.mark.parametrize("line", QUIET_TEXTS)
def test_the_same_words_of_another_program_stay_silent(line: str) -> None:
    assert failure_findings(line + "\n") == [], line


# A store read's message wrapped at "got error" (the next line holds the error) is not a cut: the net and the
# family leave the wrapped line to the record; at the paste's end it is read.
def test_a_store_read_wrapped_at_got_error_is_not_a_cut() -> None:
    wrapped = "[E] store->get('0') got error\nepoch 2 done\n"
    assert [f.code for f in failure_findings(wrapped)] == []
    ended = "epoch 1 done\n[E] store->get('0') got error\n"
    root = root_finding(ended)
    assert root is not None and root.category == "rendezvous", root


# --- 2026-12-07 (r2): the meeting's set-up and a killed process, as their programs print them ---

# (log, code, category): each family's variants; near-misses below.
MEETING_AND_KILLS = [
    # torch.distributed.rpc used without init_rpc: rpc_agent.cpp's assert, 1.5 / 1.6-1.x / 2.x, api.py's
    # check (v20F-rendezvous_init-005: Pipe without the RPC framework)
    (
        "RuntimeError: agent INTERNAL ASSERT FAILED at "
        '"/pytorch/torch/csrc/distributed/rpc/rpc_agent.cpp":247, please report a bug to PyTorch. '
        "Current RPC agent is not set!",
        "RUN224",
        "rendezvous",
    ),
    (
        "RuntimeError: currentRpcAgent_ INTERNAL ASSERT FAILED at /opt/conda/conda-bld/pytorch_1587428398394/"
        "work/torch/csrc/distributed/rpc/rpc_agent.cpp:197, please report a bug to PyTorch. Current RPC "
        "agent "
        "is not set!",
        "RUN224",
        "rendezvous",
    ),
    (
        "[rank0]: RuntimeError: Current RPC agent is not set! Did you initialize the RPC framework (e.g. by "
        "calling `rpc.init_rpc`)?",
        "RUN224",
        "rendezvous",
    ),
    (
        "RuntimeError: RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.",
        "RUN224",
        "rendezvous",
    ),
    # TensorRT-LLM's engine and MPI world sizes (v20F-rendezvous_init-003): the Python runner, the C++ runtime
    (
        "mpirun -n 2 --allow-run-as-root python ../run.py --engine_dir=./tmp/trt_engines/fp16/2-gpu/\n"
        "    assert world_size == tensorrt_llm.mpi_world_size(), \\\n"
        "AssertionError: Engine world size (2 * 1) != Runtime world size (1)\n",
        "RUN224",
        "rendezvous",
    ),
    ("AssertionError: Engine world size (4) != Runtime world size (2)", "RUN224", "rendezvous"),
    (
        "[TensorRT-LLM][ERROR] Assertion failed: MPI size 1 != TP size 2 * PP size 1 * CP Size 1 "
        "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:99)",
        "RUN224",
        "rendezvous",
    ),
    ("[TensorRT-LLM][ERROR] Assertion failed: MPI size 4 != TP size 8 * PP size 1", "RUN224", "rendezvous"),
    # torchrun for several nodes with a dynamic backend and --master-addr but no endpoint
    # (v19G-rendezvous_init-001), joined to a long command line, or on its own line, or in 2.x's record form
    (
        "+ torchrun --nnodes=2 --nproc_per_node=1 --node_rank=0 --master_addr=11.214.25.222 "
        "--master_port 9999 "
        "--rdzv_id=1986 --rdzv_backend=c10d train.py --config conf/a.yaml --train_data data/zeroshot_large/"
        "parquet_phoneme/data.list --model_dir /apdcephfs/users/public_repo/exp/llm/torch_ddp\n"
        "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n",
        "RUN224",
        "rendezvous",
    ),
    (
        "$ torchrun --nnodes 3 --node-rank 1 --master-addr 10.0.0.1 --rdzv-backend c10d train.py\n"
        "[2024-03-12 08:22:45,549] torch.distributed.run: [WARNING] master_addr is only used for static "
        "rdzv_backend and when rdzv_endpoint is not specified.\n"
        "[2024-03-12 08:22:45,549] torch.distributed.run: [WARNING] "
        "*****************************************\n",
        "RUN224",
        "rendezvous",
    ),
    # the process group's start announced, then a person's Ctrl-C and the launcher's traceback
    # (v20B-rendezvous_init-005): DeepSpeed's init_distributed, Lightning's announcement
    (
        "[2023-06-09 11:07:49,777] [INFO] [comm.py:622:init_distributed] Initializing TorchBackend in "
        "DeepSpeed with backend nccl\n"
        "^CWARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down "
        "workers\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 21287 closing signal SIGINT\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n",
        "RUN221",
        "rendezvous",
    ),
    (
        "[2023-06-09 11:07:49,777] [INFO] [comm.py:594:init_distributed] cdb=None\n"
        "[2023-06-09 11:07:49,777] [INFO] [comm.py:625:init_distributed] Initializing TorchBackend in "
        "DeepSpeed with backend nccl\n"
        "[2023-06-09 11:27:49,777] [INFO] [launch.py:315:sigkill_handler] Main process received SIGINT, "
        "exiting\n",
        "RUN221",
        "rendezvous",
    ),
    (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n^C\nKeyboardInterrupt\n",
        "RUN221",
        "rendezvous",
    ),
    # the same launch waited out by hand: the banner, then Ctrl-C (and the loopback store's launch likewise)
    (
        "torchrun --nnodes=2 --node_rank=1 --master_addr=10.0.0.1 --rdzv_backend=c10d train.py\n"
        "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.\n"
        "^CWARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down "
        "workers\n",
        "RUN224",
        "rendezvous",
    ),
    (
        "torchrun --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port 29500 train.py\n"
        "W0130 23:09:58.895000 139676709838976 torch/distributed/run.py:779] "
        "*****************************************\n"
        "W0130 23:09:58.895000 139676709838976 torch/distributed/run.py:779] Setting "
        "OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
        "^CW0130 23:19:58.895000 139676709838976 torch/distributed/elastic/agent/server/api.py:704] "
        "Received 2 death signal, shutting down workers\n",
        "RUN221",
        "rendezvous",
    ),
    # a cut stack whose last frame is a framework's start of the process group (v19G-rendezvous_init-002)
    (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 31, in <module>\n'
        "    colossalai.launch(config={}, rank=rank, world_size=world_size, host=host, port=port)\n",
        "RUN221",
        "rendezvous",
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "/home/u/ColossalAI/examples/images/resnet/train.py", line 204, in <module>\n'
        "    main()\n"
        '  File "/home/u/ColossalAI/examples/images/resnet/train.py", line 127, in main\n'
        "    colossalai.launch_from_torch\n",
        "RUN221",
        "rendezvous",
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "pretrain_gpt.py", line 210, in <module>\n'
        "    pretrain(train_valid_test_datasets_provider, model_provider)\n"
        '  File "/workspace/megatron/training.py", line 92, in pretrain\n'
        "    initialize_megatron(extra_args_provider=extra_args_provider)\n"
        '  File "/workspace/megatron/initialize.py", line 79, in initialize_megatron\n'
        "    finish_mpu_init()\n"
        '  File "/workspace/megatron/initialize.py", line 59, in finish_mpu_init\n'
        "    _initialize_distributed()\n",
        "RUN221",
        "rendezvous",
    ),
    # the shell's signal message glued to a progress bar's last redraw (v19E-process_killed-003)
    ("[00:00<?,?it/s]Segmentation fault", "RUN131", "process_crash"),
    ("Epoch 1:  10%|#         | 1/10 [00:05<00:45,  5.01s/it]Bus error", "RUN131", "process_crash"),
    # DeepSpeed's launcher record in a title's Title Case (v19B-process_killed-004)
    ("Step3 Exits with Return Code = -6", "RUN131", "process_crash"),
    ("Training Exits With Return Code = -11 On Multi Node", "RUN131", "process_crash"),
    # Ray's task error naming a dead actor or worker, its message cut (v20G-process_killed-003)
    (
        "ray.exceptions.RayTaskError(ActorDiedError): ray::main_task() (pid=1042684, ip=147.8.181.248)\n"
        '  File "/verl/trainer/main_ppo.py", line 188, in main_task\n',
        "RUN133",
        "process_crash",
    ),
    (
        "ray.exceptions.RayTaskError(WorkerCrashedError): ray::train_fn() (pid=7, ip=10.0.0.2)",
        "RUN133",
        "process_crash",
    ),
]


@pytest.mark.parametrize(("log", "code", "category"), MEETING_AND_KILLS)
def test_the_meeting_and_killed_families_reach_their_code(log: str, code: str, category: str) -> None:
    root = root_finding(log if log.endswith("\n") else log + "\n")
    assert root is not None and (root.code, root.category) == (code, category), (log, root)


QUIET_MEETING_AND_KILLS = [
    # the RPC agent set twice is another failure; an RPC log line that names the agent
    "RuntimeError: Current RPC agent is set!",
    "INFO: RPC agent is set for worker0, starting the pipeline",
    # equal sizes (the assert's text in a source line or a passing report)
    "Engine world size (2 * 1) != Runtime world size (2)",
    "    assert world_size == tensorrt_llm.mpi_world_size(), f'Engine world size ({world_size}) != Runtime'",
    "[TensorRT-LLM][INFO] MPI size 2 != TP size 2 * PP size 1 check skipped",
    # the warning after a single-node or --standalone launch (every such run prints it), and after a
    # multi-node launch that gave the endpoint, and a multi-node launch whose ranks went on to train
    "torchrun --standalone --nproc_per_node=2 multigpu_torchrun.py 50 10\n"
    "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.\n",
    "torchrun --nnodes=1 --nproc_per_node=2 --rdzv_id=100 --rdzv_backend=c10d --master_addr=10.0.0.1 a.py\n"
    "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.\n",
    "torchrun --nnodes=2 --rdzv_backend=c10d --rdzv_endpoint=10.0.0.1:29400 --master_addr=10.0.0.1 a.py\n"
    "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.\n",
    "torchrun --nnodes=2 --rdzv_backend=c10d --master_addr=127.0.0.2 a.py\n"
    "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.\n"
    "[GPU0] Epoch 0 | Batchsize: 32 | Steps: 32\n[GPU1] Epoch 0 | Batchsize: 32 | Steps: 32\n"
    "Epoch 0 | Training snapshot saved at snapshot.pt\n",
    # the same start cut there with no stop at all (a healthy log cut at that line)
    "[INFO] [comm.py:622:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl\n",
    # a cut stack in a framework's other set-up (not its launch)
    "Traceback (most recent call last):\n"
    '  File "train.py", line 127, in main\n'
    "    colossalai.initialize(model, optimizer)\n",
    # a progress bar followed by the signal's words in a sentence, and a bar about a segmentation task
    "[00:00<?,?it/s]Segmentation fault happened in my code?",
    "Segmentation: 100%|##########| 10/10 [00:01<00:00, 9.5it/s]",
    # Title Case titles that ask or name a setting; a launcher's clean exit
    "How To Set The NCCL Timeout For Long Evaluation",
    "Exits With Return Code = 0 After Training Finished",
    "Training Finished Successfully After The Return Code Check",
    # Ray's task error of the user's own exception, an import of the class
    "ray.exceptions.RayTaskError(ValueError): ray::main_task() (pid=1, ip=10.0.0.1)",
    "from ray.exceptions import ActorDiedError, RayTaskError",
]


@pytest.mark.parametrize("log", QUIET_MEETING_AND_KILLS)
def test_the_meeting_and_killed_near_misses_stay_silent(log: str) -> None:
    assert failure_findings(log if log.endswith("\n") else log + "\n") == [], log


# The process group's start, then the run's progress, then a person's Ctrl-C: a run stopped by hand after the
# meeting, not a hang in it (the launcher's record of the signal is launcher.py's own reading).
def test_a_stop_by_hand_after_the_run_went_on_is_not_a_hang_at_the_start() -> None:
    log = (
        "[INFO] [comm.py:622:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl\n"
        "[INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.9.2\n"
        "{'loss': 2.31, 'learning_rate': 1e-05, 'epoch': 0.01}\n"
        "^CWARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down "
        "workers\n"
    )
    assert all(f.facts.get("problem") != "hang at process group start" for f in failure_findings(log))
